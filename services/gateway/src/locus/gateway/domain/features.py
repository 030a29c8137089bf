"""Features of each candidate file and symbol of a ranking, for the learned ranker.

One function, ``candidate_features``, computes them from a ``RankingInput`` — at serving time in
the gateway and at training time from a dumped input (``candidates``) — so training sees exactly
what production computes. The hand ranking (``RankingV1``) runs first over every candidate: its
score and each of its signals (what an identifier, a dotted name, a path, a frame, the graph
added) are features, beside retrieval ranks and scores per list, path role, symbol kind and size,
graph relations and the shape of the question. The learned model decides how much each is worth.

Feature names are part of a trained model's contract: a model records the list it was trained
on, and ``FILE_FEATURES`` / ``SYMBOL_FEATURES`` only ever grow at the end."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from locus.codepaths import PathRole, classify_path
from locus.gateway.domain.cue_matching import name_words_of
from locus.gateway.domain.question_cues import QuestionCues, split_identifier
from locus.gateway.domain.question_parts import QUESTION_PARTS
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import (
    ChunkMatch,
    RankedSymbol,
    Ranker,
    Ranking,
    RankingInput,
    SymbolRef,
)
from locus.gateway.domain.symbol_kinds import feature_kind

ALL_CANDIDATES = 1_000_000
CUE_SIGNALS = (
    "identifier",
    "dotted_name",
    "member",
    "name_words",
    "stacktrace",
    "path",
    "module",
    "graph",
)
ROLES = tuple(PathRole)
KINDS = ("function", "method", "class", "module")  # the other kinds: symbol_kinds.feature_kind
RELATIONS = ("contains", "calls", "called_by", "inherits", "contained_in")


_KIND_COLUMNS = {kind: tuple(1.0 if kind == column else 0.0 for column in KINDS) for kind in KINDS}
_NO_KIND = (0.0,) * len(KINDS)


def _kind_one_hot(kind: str) -> tuple[float, ...]:
    return _KIND_COLUMNS.get(kind, _NO_KIND)


_QUESTION_FEATURES = (
    "q_log_chars",
    "q_identifiers",
    "q_dotted_names",
    "q_paths",
    "q_frames",
    "q_has_code_block",
    "q_vectors_present",
)
_RETRIEVAL_FEATURES = (
    "v1_score",
    "v1_score_ratio",
    "v1_rank_recip",
    "hits",
    "best_hit_norm",
    "best_fused_rank_recip",
    "lexical_hits",
    "best_lexical_rank_recip",
    "best_lexical_score_ratio",
    "vector_hits",
    "best_vector_rank_recip",
    "best_vector_score",
)
# What kind of text a file is, by the language ingestion gave it: code, prose or configuration.
PROGRAMMING_LANGUAGES = frozenset(
    {
        "python", "java", "javascript", "typescript", "tsx", "go", "rust", "c", "cpp", "c_sharp",
        "csharp", "ruby", "php", "kotlin", "scala", "swift", "objc", "lua", "r", "julia", "dart",
        "elixir", "erlang", "haskell", "ocaml", "clojure", "zig", "perl", "groovy", "cython",
    }
)  # fmt: skip
PROSE_LANGUAGES = frozenset({"markdown", "restructuredtext", "text", "asciidoc", "latex", ""})
_LANGUAGE_FEATURES = ("lang_code", "lang_prose", "lang_other", "lang_share")
_PATH_FEATURES = (
    *_LANGUAGE_FEATURES,
    *(f"role_{role.value}" for role in ROLES),
    "path_depth",
    "path_is_init",
    "path_word_share",
    "path_words_used",
)
# Retrieval's whole-file list (a symbol has its file's): rank, score over the list's best, and
# the score over the mean of the list's ten best (how far above the crowd it stands).
_WHOLE_FILE_FEATURES = ("whole_file_rank_recip", "whole_file_score_ratio", "whole_file_lift")
# The same search by each part of the question alone (``question_parts``: the title, the
# opening): the file's BM25, its share of the part's best and its rank; 0 where the part did
# not list it. A symbol has its file's (``file_part_*``). Leave one repository out, Func Acc@10
# 44.3 -> 45.7 with the files' columns, 46.1 with the symbols' too (bench/RESULTS.md, session 18).
_PART_COLUMNS = ("score", "share", "rank_recip")
_PART_FEATURES = tuple(f"part_{part}_{name}" for part in QUESTION_PARTS for name in _PART_COLUMNS)
# The chunk search by each part of the question alone: each hit speaks for the innermost
# candidate symbol of its file whose lines hold it. A symbol reads its best hit's score over the
# part's best and its reciprocal rank; a file reads its best chunk's (any chunk of it); 0 where
# the part's list has none.
_PART_CHUNK_COLUMNS = ("chunk_share", "chunk_rank_recip")
_PART_CHUNK_FEATURES = tuple(
    f"part_{part}_{name}" for part in QUESTION_PARTS for name in _PART_CHUNK_COLUMNS
)
# The file's change history: whether the project has one, how often and how lately the file
# changed, and how its commits' messages match the question. Files only: given to symbols too
# (their file's), it lowered dev Func Acc@5 by 2-3 of 38 instances for a gain within noise
# leave-one-repository-out (bench/RESULTS.md).
_HISTORY_FEATURES = (
    "history_present",
    "history_log_commits",
    "history_commits_ratio",
    "history_recency",
    "history_percentile",
    "history_message_ratio",
    "history_message_rank_recip",
)
# The question's vector similarity to a symbol's best chunk (retrieval ScoreSymbols over the
# stored vectors, for the hand ranking's first VECTOR_SCORED_SYMBOLS symbols; a file takes its
# best symbol's): whether it was scored, the cosine, its distance below the best scored
# candidate (capped at 1), and its place among the scored candidates. All 0 (gap 1) when the
# project has no vectors yet: the model learns both cases.
VECTOR_SCORED_SYMBOLS = 100
_VECTOR_FEATURES = ("scored", "similarity", "similarity_gap", "similarity_rank_recip")
_NO_VECTOR = [0.0, 0.0, 1.0, 0.0]
# Their column names, files' and symbols' (a model that reads one of them wants ScoreSymbols).
VECTOR_SIMILARITY_FEATURES = (
    *(f"file_vector_{name}" for name in _VECTOR_FEATURES),
    *(f"vector_{name}" for name in _VECTOR_FEATURES),
)
FILE_FEATURES: tuple[str, ...] = (
    *_QUESTION_FEATURES,
    *_RETRIEVAL_FEATURES,
    *(f"cue_{signal}" for signal in CUE_SIGNALS),
    *(f"best_symbol_cue_{signal}" for signal in CUE_SIGNALS),
    "path_role_penalty",
    *_PATH_FEATURES,
    "symbols",
    "named_symbols",
    "graph_symbols",
    "best_symbol_ratio",
    *(f"file_list_{name}" for name in ("rank_recip", "score_ratio", "best_ratio", "chunks")),
    *_WHOLE_FILE_FEATURES,
    *_PART_FEATURES,
    *_PART_CHUNK_FEATURES,
    *_HISTORY_FEATURES,
    *VECTOR_SIMILARITY_FEATURES[: len(_VECTOR_FEATURES)],
)
# The learned file model's verdict on a symbol's file: the reciprocal of the file's place in
# the model's file ranking, and its score's distance below the top file's (capped). A two-stage
# ranker: the symbol model learns how far to trust the file model, which sees the file-level
# evidence (change history, whole-file BM25) a symbol does not. ``candidate_features`` leaves
# them 0 and ``with_file_scores`` fills them once the file model has scored the files; at
# training time from out-of-fold file scores (bench/ranker/train.py), so the symbol model
# learns from a file model as good as the one it meets on new repositories.
FILE_MODEL_FEATURES = ("file_model_rank_recip", "file_model_margin")
FILE_MODEL_MARGIN_CAP = 10.0
SYMBOL_FEATURES: tuple[str, ...] = (
    *_QUESTION_FEATURES,
    *_RETRIEVAL_FEATURES,
    *(f"cue_{signal}" for signal in CUE_SIGNALS),
    "path_role_penalty",
    *_PATH_FEATURES,
    *(f"kind_{kind}" for kind in KINDS),
    "log_lines",
    "named",
    *(f"graph_{relation}" for relation in RELATIONS),
    "file_v1_rank_recip",
    "file_v1_score_ratio",
    "rank_in_file_recip",
    "name_word_share",
    "outline_only",
    *(f"file_list_{name}" for name in ("rank_recip", "score_ratio", "best_ratio", "chunks")),
    *_WHOLE_FILE_FEATURES,
    *(f"file_{name}" for name in _PART_FEATURES),
    *_PART_CHUNK_FEATURES,
    *VECTOR_SIMILARITY_FEATURES[len(_VECTOR_FEATURES) :],
    *FILE_MODEL_FEATURES,
)
_FILE_MODEL_COLUMNS = [SYMBOL_FEATURES.index(name) for name in FILE_MODEL_FEATURES]

_PATH_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass(frozen=True)
class CandidateFeatures:
    """Every candidate of one request with its features, in the hand ranking's order."""

    ranking: Ranking  # the hand ranking over every candidate (its evidence explains a result)
    file_rows: list[list[float]]  # FILE_FEATURES, one row per ranking.files entry
    symbol_rows: list[list[float]]  # SYMBOL_FEATURES, one row per ranking.symbols entry


def candidate_features(request: RankingInput, hand: RankingV1) -> CandidateFeatures:
    ranking = hand.rank(replace(request, max_files=ALL_CANDIDATES, max_symbols=ALL_CANDIDATES))
    chunks = {c.chunk_id: c for c in request.chunks}
    question = _question_features(request)
    top_lexical = max((c.lexical_score for c in request.chunks), default=0.0)
    top_file = ranking.files[0].score if ranking.files else 0.0
    top_symbol = ranking.symbols[0].score if ranking.symbols else 0.0
    named = {s.node_id for s in request.named_symbols}
    matched = {c.symbol.node_id for c in request.chunks if c.symbol is not None}
    relations: dict[str, set[str]] = defaultdict(set)
    for neighbor in request.graph_neighbors:
        relations[neighbor.symbol.node_id].add(_relation_name(neighbor.relation, neighbor.reverse))
    words = request.cues.words
    # The share of the hits in each language: a Python project's question is answered in
    # Python; a README that matches it is one of few Markdown hits.
    languages = Counter(c.language for c in request.chunks)
    language_share = {lang: n / max(len(request.chunks), 1) for lang, n in languages.items()}
    top_list_score = max((m.score for m in request.file_hits), default=0.0)
    top_list_best = max((m.best_score for m in request.file_hits), default=0.0)
    file_list = {
        m.file_id: [
            1.0 / m.rank if m.rank > 0 else 0.0,
            _ratio(m.score, top_list_score),
            _ratio(m.best_score, top_list_best),
            float(m.chunks),
        ]
        for m in request.file_hits
    }
    not_listed = [0.0, 0.0, 0.0, 0.0]
    whole_file = _whole_file_features(request)
    not_whole = [0.0, 0.0, 0.0]
    parts = _part_features(request)
    not_in_parts = [0.0] * len(_PART_FEATURES)
    symbol_part_chunks, file_part_chunks = _part_chunk_features(
        request, [s.symbol for s in ranking.symbols]
    )
    no_part_chunk = [0.0] * len(_PART_CHUNK_FEATURES)
    history = _history_features(request)
    no_history = [1.0 if request.history_commits > 0 else 0.0] + [0.0] * (
        len(_HISTORY_FEATURES) - 1
    )

    file_rank = {f.file_id: i for i, f in enumerate(ranking.files, start=1)}
    file_score = {f.file_id: f.score for f in ranking.files}
    symbols_by_file: dict[str, list[RankedSymbol]] = defaultdict(list)
    place_in_file: list[int] = []  # per ranking.symbols entry: 1 = its file's best
    for symbol in ranking.symbols:
        siblings = symbols_by_file[symbol.symbol.file_id]
        siblings.append(symbol)
        place_in_file.append(len(siblings))
    symbol_vectors, file_vectors = _vector_features(request, ranking)
    # A file's path features, computed once for all its symbols.
    path_features: dict[tuple[str, str], list[float]] = {}

    def path_features_of(relative_path: str, language: str) -> list[float]:
        key = (relative_path, language)
        if key not in path_features:
            path_features[key] = _path_features(relative_path, language, words, language_share)
        return path_features[key]

    symbol_rows = []
    symbol_cues: dict[str, dict[str, float]] = {}
    for rank, ranked in enumerate(ranking.symbols, start=1):
        ref = ranked.symbol
        cues = _signal_sums(ranked.evidence)
        symbol_cues[ref.node_id] = cues
        row = [
            *question,
            *_retrieval_features(
                ranked.score, top_symbol, rank, [chunks[i] for i in ranked.chunk_ids], top_lexical
            ),
            *(cues.get(signal, 0.0) for signal in CUE_SIGNALS),
            cues.get("path_role", 0.0),
            *path_features_of(ref.relative_path, ref.language),
            *_kind_one_hot(feature_kind(ref.kind)),
            math.log1p(max(ref.end_line - ref.start_line + 1, 0)),
            1.0 if ref.node_id in named else 0.0,
            *(1.0 if r in relations.get(ref.node_id, ()) else 0.0 for r in RELATIONS),
            1.0 / file_rank[ref.file_id] if ref.file_id in file_rank else 0.0,
            _ratio(file_score.get(ref.file_id, 0.0), top_file),
            1.0 / place_in_file[rank - 1],
            _name_word_share(ref.name, words),
            # Only in its file's outline: no chunk, name lookup or graph hop brought it.
            0.0
            if ref.node_id in matched or ref.node_id in named or ref.node_id in relations
            else 1.0,
            *file_list.get(ref.file_id, not_listed),
            *whole_file.get(ref.file_id, not_whole),
            *parts.get(ref.file_id, not_in_parts),
            *symbol_part_chunks.get(ref.node_id, no_part_chunk),
            *symbol_vectors.get(ref.node_id, _NO_VECTOR),
            *(0.0 for _ in FILE_MODEL_FEATURES),  # with_file_scores
        ]
        symbol_rows.append(row)

    # Per file, each cue's best value among its symbols (a symbol without the cue counts 0).
    file_best_cues: dict[str, dict[str, float]] = defaultdict(dict)
    for ranked in ranking.symbols:
        best = file_best_cues[ranked.symbol.file_id]
        for signal, value in symbol_cues[ranked.symbol.node_id].items():
            if value > best.get(signal, 0.0):
                best[signal] = value

    file_rows = []
    for rank, ranked_file in enumerate(ranking.files, start=1):
        cues = _signal_sums(ranked_file.evidence)
        members = symbols_by_file.get(ranked_file.file_id, [])
        best_cues = file_best_cues.get(ranked_file.file_id, {})
        best_symbol = members[0].score if members else 0.0
        row = [
            *question,
            *_retrieval_features(
                ranked_file.score,
                top_file,
                rank,
                [chunks[i] for i in ranked_file.chunk_ids],
                top_lexical,
            ),
            *(cues.get(signal, 0.0) for signal in CUE_SIGNALS),
            *(best_cues.get(signal, 0.0) for signal in CUE_SIGNALS),
            cues.get("path_role", 0.0),
            *path_features_of(ranked_file.relative_path, ranked_file.language),
            float(len(members)),
            float(sum(1 for s in members if s.symbol.node_id in named)),
            float(sum(1 for s in members if s.symbol.node_id in relations)),
            _ratio(best_symbol, top_symbol),
            *file_list.get(ranked_file.file_id, not_listed),
            *whole_file.get(ranked_file.file_id, not_whole),
            *parts.get(ranked_file.file_id, not_in_parts),
            *file_part_chunks.get(ranked_file.relative_path, no_part_chunk),
            *history.get(ranked_file.relative_path, no_history),
            *file_vectors.get(ranked_file.file_id, _NO_VECTOR),
        ]
        file_rows.append(row)
    return CandidateFeatures(ranking=ranking, file_rows=file_rows, symbol_rows=symbol_rows)


def with_file_scores(
    symbol_rows: Sequence[Sequence[float]],
    symbol_files: Sequence[str],
    files: Sequence[str],
    file_scores: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """``symbol_rows`` (SYMBOL_FEATURES) as a matrix with ``FILE_MODEL_FEATURES`` set from the
    file model's ``file_scores`` of ``files``; ``symbol_files`` names each symbol's file in the
    same keys. A file the model did not score counts as last, at the capped margin."""
    if not len(symbol_rows):
        return np.zeros((0, len(SYMBOL_FEATURES)))
    matrix = np.asarray(symbol_rows, dtype=np.float64).reshape(len(symbol_rows), -1).copy()
    scores = np.asarray(file_scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    place = {files[i]: (1.0 / rank, float(scores[i])) for rank, i in enumerate(order, start=1)}
    top = float(scores[order[0]]) if len(order) else 0.0
    unscored = (0.0, top - FILE_MODEL_MARGIN_CAP)
    verdicts = np.asarray([place.get(key, unscored) for key in symbol_files], dtype=np.float64)
    matrix[:, _FILE_MODEL_COLUMNS[0]] = verdicts[:, 0]
    matrix[:, _FILE_MODEL_COLUMNS[1]] = np.maximum(verdicts[:, 1] - top, -FILE_MODEL_MARGIN_CAP)
    return matrix


def vector_scored_symbols(request: RankingInput, hand: Ranker) -> list[SymbolRef]:
    """The symbols Locate asks retrieval's vector similarity for: the hand ranking's first
    ``VECTOR_SCORED_SYMBOLS`` over every candidate (the same function builds the training
    data, ``bench/ranker/vectors.py``)."""
    ranking = hand.rank(
        replace(request, max_files=ALL_CANDIDATES, max_symbols=VECTOR_SCORED_SYMBOLS)
    )
    return [ranked.symbol for ranked in ranking.symbols[:VECTOR_SCORED_SYMBOLS]]


def _vector_features(
    request: RankingInput, ranking: Ranking
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """``_VECTOR_FEATURES`` per symbol node id and per file id (a file: its best symbol)."""
    similarity = request.symbol_similarity
    if not similarity:
        return {}, {}
    symbol_best: dict[str, float] = {}
    file_best: dict[str, float] = {}
    for ranked in ranking.symbols:
        value = similarity.get(ranked.symbol.node_id)
        if value is None:
            continue
        symbol_best[ranked.symbol.node_id] = value
        file_id = ranked.symbol.file_id
        file_best[file_id] = max(value, file_best.get(file_id, value))
    return _similarity_rows(symbol_best), _similarity_rows(file_best)


def _similarity_rows(values: dict[str, float]) -> dict[str, list[float]]:
    if not values:
        return {}
    order = sorted(values, key=lambda key: -values[key])
    top = values[order[0]]
    return {
        key: [1.0, values[key], min(top - values[key], 1.0), 1.0 / place]
        for place, key in enumerate(order, start=1)
    }


def _whole_file_features(request: RankingInput) -> dict[str, list[float]]:
    hits = request.whole_file_hits
    top = max((m.score for m in hits), default=0.0)
    best = sorted((m.score for m in hits), reverse=True)[:10]
    crowd = sum(best) / len(best) if best else 0.0
    return {
        m.file_id: [
            1.0 / m.rank if m.rank > 0 else 0.0,
            _ratio(m.score, top),
            _ratio(m.score, crowd),
        ]
        for m in hits
    }


def _part_features(request: RankingInput) -> dict[str, list[float]]:
    """Per file id: ``_PART_FEATURES`` (each part's list in ``QUESTION_PARTS`` order)."""
    rows: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(_PART_FEATURES))
    width = len(_PART_COLUMNS)
    for position, part in enumerate(QUESTION_PARTS):
        hits = request.whole_file_parts.get(part, ())
        top = max((m.score for m in hits), default=0.0)
        for m in hits:
            rows[m.file_id][width * position : width * (position + 1)] = [
                m.score,
                _ratio(m.score, top),
                1.0 / m.rank if m.rank > 0 else 0.0,
            ]
    return dict(rows)


def _part_chunk_features(
    request: RankingInput, symbols: Sequence[SymbolRef]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """``_PART_CHUNK_FEATURES`` per symbol node id and per relative path."""
    by_path: dict[str, list[SymbolRef]] = defaultdict(list)
    for ref in symbols:
        by_path[ref.relative_path].append(ref)
    width = len(_PART_CHUNK_COLUMNS)
    symbol_rows: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(_PART_CHUNK_FEATURES))
    file_rows: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(_PART_CHUNK_FEATURES))

    def keep_best(row: list[float], start: int, values: list[float]) -> None:
        for offset, value in enumerate(values):
            row[start + offset] = max(row[start + offset], value)

    for position, part in enumerate(QUESTION_PARTS):
        hits = request.part_chunks.get(part, ())
        top = max((hit.score for hit in hits), default=0.0)
        for hit in hits:
            values = [_ratio(hit.score, top), 1.0 / hit.rank if hit.rank > 0 else 0.0]
            keep_best(file_rows[hit.relative_path], width * position, values)
            holders = [
                ref
                for ref in by_path.get(hit.relative_path, ())
                if ref.start_line <= hit.start_line and hit.end_line <= ref.end_line
            ]
            if holders:
                inner = min(holders, key=lambda ref: (ref.end_line - ref.start_line, ref.node_id))
                keep_best(symbol_rows[inner.node_id], width * position, values)
    return dict(symbol_rows), dict(file_rows)


def _history_features(request: RankingInput) -> dict[str, list[float]]:
    """Per relative path: ``_HISTORY_FEATURES``; ratios and ranks among the candidates."""
    items = request.file_history
    if request.history_commits <= 0 or not items:
        return {}
    top_commits = max(item.commits for item in items)
    top_message = max(item.message_score for item in items)
    by_message = sorted(
        (item for item in items if item.message_score > 0), key=lambda i: -i.message_score
    )
    message_rank = {item.relative_path: rank for rank, item in enumerate(by_message, start=1)}
    return {
        item.relative_path: [
            1.0,
            math.log1p(item.commits),
            _ratio(item.commits, top_commits),
            1.0 / (1 + item.last_change),
            item.change_percentile,
            _ratio(item.message_score, top_message),
            1.0 / message_rank[item.relative_path] if item.relative_path in message_rank else 0.0,
        ]
        for item in items
    }


def _question_features(request: RankingInput) -> list[float]:
    cues: QuestionCues = request.cues
    return [
        math.log1p(cues.question_chars),
        float(len(cues.identifiers)),
        float(len(cues.dotted_names)),
        float(len(cues.paths)),
        float(len(cues.frames)),
        1.0 if cues.has_code_block else 0.0,
        1.0 if any(c.vector_rank for c in request.chunks) else 0.0,
    ]


def _retrieval_features(
    score: float, top: float, rank: int, hits: Sequence[ChunkMatch], top_lexical: float
) -> list[float]:
    # One pass (a candidate has a few hits, a request a thousand candidates); a best value is
    # None until a hit of its list gives one, then 0.0 when none did.
    top_fused: float | None = None
    best_lexical_score: float | None = None
    best_vector_score: float | None = None
    best_rank = best_lexical_rank = best_vector_rank = 0.0
    lexical = vector = 0
    for c in hits:
        if top_fused is None or c.score > top_fused:
            top_fused = c.score
        if c.rank:
            best_rank = max(best_rank, 1.0 / c.rank)
        if c.lexical_rank:
            lexical += 1
            best_lexical_rank = max(best_lexical_rank, 1.0 / c.lexical_rank)
            if best_lexical_score is None or c.lexical_score > best_lexical_score:
                best_lexical_score = c.lexical_score
        if c.vector_rank:
            vector += 1
            best_vector_rank = max(best_vector_rank, 1.0 / c.vector_rank)
            if best_vector_score is None or c.vector_score > best_vector_score:
                best_vector_score = c.vector_score
    return [
        score,
        _ratio(score, top),
        1.0 / rank,
        float(len(hits)),
        top_fused or 0.0,
        best_rank,
        float(lexical),
        best_lexical_rank,
        _ratio(best_lexical_score or 0.0, top_lexical),
        float(vector),
        best_vector_rank,
        best_vector_score or 0.0,
    ]


def _path_features(
    relative_path: str, language: str, words: frozenset[str], language_share: dict[str, float]
) -> list[float]:
    role = classify_path(relative_path)
    code = language in PROGRAMMING_LANGUAGES
    prose = not code and (language in PROSE_LANGUAGES or relative_path.endswith(".txt"))
    parts = relative_path.strip("/").split("/")
    path_words = {
        w for token in _PATH_WORD.findall(relative_path.rsplit(".", 1)[0]) for w in _words(token)
    }
    used = sum(1 for w in path_words if w in words)
    return [
        1.0 if code else 0.0,
        1.0 if prose else 0.0,
        0.0 if code or prose else 1.0,
        language_share.get(language, 0.0),
        *(1.0 if role == r else 0.0 for r in ROLES),
        float(len(parts)),
        1.0 if parts[-1].startswith(("__init__.", "index.", "mod.rs")) else 0.0,
        _ratio(used, len(path_words)),
        float(used),
    ]


def _name_word_share(name: str, words: frozenset[str]) -> float:
    parts = name_words_of(name)
    return _ratio(sum(1 for p in parts if p in words), len(parts))


def _words(token: str) -> list[str]:
    return [p for p in split_identifier(token)[1:] or [token.lower()] if p]


def _signal_sums(evidence: Iterable[object]) -> dict[str, float]:
    sums: dict[str, float] = defaultdict(float)
    for item in evidence:
        sums[item.signal] += item.weight  # type: ignore[attr-defined]
    return sums


def _relation_name(relation: str, reverse: bool) -> str:
    if relation == "calls":
        return "called_by" if reverse else "calls"
    if relation == "contains":
        return "contained_in" if reverse else "contains"
    return "inherits" if relation == "inherits" else relation


def _ratio(value: float, total: float) -> float:
    return value / total if total > 0 else 0.0
