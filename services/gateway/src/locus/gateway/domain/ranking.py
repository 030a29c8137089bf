"""Ranking of located code: chunk hits from retrieval (already mapped to their innermost symbol)
and symbols found by name become ranked symbols and files, each with the evidence that put it
there. ``Ranker`` is the seam for better rankings; ``RankingV1`` is the first, hand-tuned one."""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Protocol

from locus.codepaths import PathRole, classify_path
from locus.gateway.domain.question_cues import QuestionCues, split_identifier
from locus.gateway.domain.symbol_kinds import (
    CALLABLE_KINDS,
    CONTAINER_KINDS,
    MEMBER_KINDS,
    MODULE_KINDS,
    dotted_scope,
    member_owner,
)

RRF_K = 60  # the retrieval service's default reciprocal-rank-fusion constant


@dataclass(frozen=True)
class SymbolRef:
    node_id: str
    name: str
    qualified_name: str
    scope_name: str
    # "module" | "class" | "function" | "method" | "constructor" | "interface" | "struct" |
    # "enum" | "trait" | "namespace" | "" (families: symbol_kinds)
    kind: str
    file_id: str
    relative_path: str
    language: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class ChunkMatch:
    """One retrieval hit and the innermost symbol that covers it (None when unknown)."""

    chunk_id: str
    file_id: str
    relative_path: str
    language: str
    start_line: int
    end_line: int
    rank: int  # 1-based position in the fused list
    score: float  # fused retrieval score
    lexical_rank: int = 0  # 0 = not in the lexical list
    vector_rank: int = 0  # 0 = not in the vector list
    lexical_score: float = 0.0
    vector_score: float = 0.0
    symbol: SymbolRef | None = None


@dataclass(frozen=True)
class FileMatch:
    """A file of retrieval's file list: ranked by the BM25 of its chunks among a large pool
    (it reaches files the chunk list leaves out)."""

    file_id: str
    relative_path: str
    language: str
    rank: int
    score: float  # the sum of its chunks' BM25 scores in the pool
    best_score: float
    chunks: int


@dataclass(frozen=True)
class PartHit:
    """A chunk found by searching one part of the question alone (``question_parts``): where
    it lies, and its place and BM25 score in that part's lexical list."""

    file_id: str
    relative_path: str
    start_line: int
    end_line: int
    rank: int
    score: float


@dataclass(frozen=True)
class FileHistory:
    """A candidate file's change history (ingestion ScoreFileHistory): among the newest
    commits of its source, how many changed it, how many commits ago the last did, its place
    among the history's files by how often they change, and the BM25 of the question against
    the messages of the commits that changed it."""

    relative_path: str
    commits: int
    last_change: int
    change_percentile: float
    message_score: float


@dataclass(frozen=True)
class Evidence:
    signal: str  # "bm25", "vector", "identifier", "dotted_name", "path", "stacktrace", ...
    detail: str
    weight: float  # what the signal added to the score (negative when it lowered it)
    chunk_id: str = ""


@dataclass(frozen=True)
class RankedSymbol:
    symbol: SymbolRef
    score: float
    evidence: tuple[Evidence, ...]
    chunk_ids: tuple[str, ...]  # the chunks that matched it, best first


@dataclass(frozen=True)
class RankedFile:
    file_id: str
    relative_path: str
    language: str
    score: float
    symbols: tuple[RankedSymbol, ...]
    evidence: tuple[Evidence, ...]
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True)
class Ranking:
    files: tuple[RankedFile, ...] = ()
    symbols: tuple[RankedSymbol, ...] = ()


@dataclass(frozen=True)
class GraphNeighbor:
    """A symbol one hop from a seed (a symbol a first ranking put on top) in the code graph."""

    symbol: SymbolRef
    seed_node_id: str
    relation: str  # "calls" | "contains" | "inherits" | "imports" | "references"
    reverse: bool  # True: walked against the edge (called-by, contained-in, ...)


@dataclass(frozen=True)
class RankingInput:
    cues: QuestionCues
    chunks: Sequence[ChunkMatch]
    named_symbols: Sequence[SymbolRef] = ()  # found by looking up names from the question
    graph_neighbors: Sequence[GraphNeighbor] = ()  # one hop from the first ranking's best
    # The functions and methods of the first ranking's best files (their outlines): a changed
    # function that no chunk matched can still be ranked.
    file_symbols: Sequence[SymbolRef] = ()
    file_hits: Sequence[FileMatch] = ()  # retrieval's file list
    # Retrieval's whole-file list (one BM25 document per file; score = the file's BM25). Only
    # the final ranking gets it: the first one, which picks graph seeds and outlined files,
    # does not.
    whole_file_hits: Sequence[FileMatch] = ()
    # The same whole-file search by each part of the question alone (``question_parts``: its
    # title, its opening), keyed by part. Columns of the learned ranking, and candidates: a file
    # only a part found competes like a file only the whole-file list found.
    whole_file_parts: Mapping[str, Sequence[FileMatch]] = field(default_factory=dict)
    # The chunk search by each part of the question alone, keyed by part (columns of the
    # learned ranking only: each hit speaks for the innermost candidate symbol that holds it).
    part_chunks: Mapping[str, Sequence[PartHit]] = field(default_factory=dict)
    # The change history of the final candidates' files (features of the learned ranking only);
    # ``history_commits`` = 0: the project has no git history (or ingestion did not answer).
    file_history: Sequence[FileHistory] = ()
    history_commits: int = 0
    # The cosine similarity of the question to each scored symbol's best chunk (retrieval
    # ScoreSymbols over the stored vectors; features of the learned ranking only). Empty: the
    # project has no vectors yet, or retrieval did not answer.
    symbol_similarity: Mapping[str, float] = field(default_factory=dict)
    include_tests: bool = False
    max_files: int = 10
    max_symbols: int = 20


def candidate_paths(request: RankingInput) -> list[str]:
    """The relative path of every file a ranking of ``request`` can hold, first seen first."""
    paths: dict[str, None] = {}
    for chunk in request.chunks:
        paths[chunk.relative_path] = None
    for symbols in (request.named_symbols, request.file_symbols):
        for symbol in symbols:
            paths[symbol.relative_path] = None
    for neighbor in request.graph_neighbors:
        paths[neighbor.symbol.relative_path] = None
    for match in file_list_matches(request):
        paths[match.relative_path] = None
    return list(paths)


def file_list_matches(request: RankingInput) -> Iterator[FileMatch]:
    """Every file list's matches: retrieval's file list, the whole-file list, then each part's
    whole-file list (in ``whole_file_parts`` order)."""
    yield from request.file_hits
    yield from request.whole_file_hits
    for hits in request.whole_file_parts.values():
        yield from hits


class Ranker(Protocol):
    def rank(self, request: RankingInput) -> Ranking: ...


_DEFAULT_ROLE_FACTORS: Mapping[PathRole, float] = MappingProxyType(
    {
        PathRole.TEST: 0.35,
        PathRole.DOCS: 0.4,
        PathRole.EXAMPLE: 0.5,
        PathRole.VENDORED: 0.25,
        PathRole.GENERATED: 0.5,
        # Not tuned: the roles added with the learned ranker take the factor of their kin
        # (benchmarks like tests; notebooks, templates, CI and build files like docs).
        PathRole.BENCHMARK: 0.35,
        PathRole.NOTEBOOK: 0.4,
        PathRole.TEMPLATE: 0.4,
        PathRole.CI: 0.4,
        PathRole.BUILD: 0.4,
    }
)


@dataclass(frozen=True)
class RankingWeights:
    """Every knob of RankingV1, so a benchmark can tune them without touching the logic."""

    # Retrieval scores are normalized so that the best hit scores 1.0; a cue the question
    # states outright (a name, a path, a frame) is worth about as much as the best hit.
    multi_hit_bonus: float = 0.15  # times the normalized score of each further hit
    multi_hit_cap: float = 0.45
    identifier: float = 1.2  # an identifier of the question is the symbol's name
    identifier_casefold: float = 0.5  # ... ignoring case
    identifier_plain_word: float = 0.6  # ... a lower-case word (`put`, `data`)
    # ... an identifier is a run of a longer name's words (`world_to_pixel` in
    # `world_to_pixel_values`, `subs` in `_eval_subs`), times the share of the name it covers
    identifier_part: float = 0.8
    dotted_name: float = 1.5  # a dotted name is the symbol's qualified/scope name or its tail
    title_name: float = 0.5  # an identifier the question's title uses weighs this much more
    path: float = 0.6  # a path of the question is the file (or a tail of it)
    path_basename: float = 0.35  # a bare file name of the question is the file's name
    path_directory: float = 0.15  # a directory of the question contains the file
    path_share_for_symbols: float = 0.8  # symbols get this share of their file's path boost
    stacktrace_line: float = 1.5  # a frame's file and line fall inside the symbol
    stacktrace_function: float = 1.0  # a frame's file and function name match the symbol
    stacktrace_file: float = 0.5  # a frame names the file
    module_path: float = 0.5  # an imported or dotted module path of the question is the file
    member_of_named: float = 0.4  # a method of a class the question names
    name_words: float = 0.4  # times the share of the symbol name's words the question uses
    # An identifier that names several symbols points at each of them less: the boost is
    # divided by the square root of how many were found by that name.
    identifier_ambiguity: bool = True
    file_context: float = 0.5  # a symbol gets this share of its file's score
    # When its best symbol outscores a file's own matches, the file still keeps this share of
    # the bonus its further matches earn (multi_hit_bonus).
    file_keeps_multi_hit: float = 1.0
    # Propagation from the first ranking's best symbols to their graph neighbours: a neighbour
    # gets graph x the seed's score x the factor of the hop (below), the best over its seeds.
    graph: float = 0.5
    graph_contains: float = 0.6  # a member of a seed class
    graph_calls: float = 0.6  # a function a seed calls
    graph_called_by: float = 0.3  # a caller of a seed
    graph_inherits: float = 0.3  # a base class or a subclass of a seed
    graph_cap: float = 1.0
    boost_cap: float = 3.0
    module_factor: float = 0.85  # a module is a coarser answer than its functions
    role_factors: Mapping[PathRole, float] = field(default_factory=lambda: _DEFAULT_ROLE_FACTORS)
    # A question that asks what the documentation says (QuestionCues.about_docs): each docs
    # candidate gets this instead of the docs factor (not tuned: no split asks such questions).
    docs_asked_for: float = 0.5
    max_evidence: int = 8
    symbols_per_file: int = 5

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, float]) -> RankingWeights:
        """The defaults with some numeric weights replaced (bool weights: 0 is off)."""
        defaults = cls()
        changed: dict[str, object] = {}
        for name, value in overrides.items():
            current = getattr(defaults, name)
            changed[name] = bool(value) if isinstance(current, bool) else float(value)
        return replace(defaults, **changed)  # type: ignore[arg-type]


def aggregate_hits(scores: Iterable[float], bonus: float, cap: float) -> float:
    """Best hit plus a bonus for further hits: max + min(cap, bonus * sum(the others))."""
    ordered = sorted(scores, reverse=True)
    if not ordered:
        return 0.0
    return ordered[0] + min(cap, bonus * sum(ordered[1:]))


def match_path(cue: str, relative_path: str) -> str:
    """How a path from the question names ``relative_path``: "exact" (equal, or the cue is a
    longer path ending in it), "suffix" (a tail of it), "basename", "directory" or ""."""
    cue = cue.strip().replace("\\", "/")
    while cue.startswith("./"):
        cue = cue[2:]
    path = relative_path.strip("/")
    if not cue or not path:
        return ""
    if cue == path or cue.endswith("/" + path):
        return "exact"
    if path.endswith("/" + cue):
        return "suffix" if "/" in cue else "basename"
    if _shared_tail(cue, path) >= 2:
        # An installed copy's path in a traceback (.../site-packages/pkg/mod.py) names the
        # repository's src/pkg/mod.py: a package directory and the file name in common.
        return "suffix"
    directory = cue.rstrip("/")
    is_directory = bool(directory) and "." not in directory.rsplit("/", 1)[-1]
    if is_directory and ("/" + directory + "/") in ("/" + path):
        return "directory"
    return ""


def name_words_of(name: str) -> list[str]:
    """The words of a symbol name worth matching: `_eval_subs` → eval, subs."""
    return [p for p in split_identifier(name)[1:] or [name.lower()] if len(p) > 2]


def module_of_path(relative_path: str) -> str:
    """`src/pkg/mod.py` → src/pkg/mod, `pkg/sub/__init__.py` → pkg/sub ("" without extension)."""
    path = relative_path.strip("/")
    stem, dot, _ = path.rpartition(".")
    if not dot or not stem:
        return ""
    return stem.removesuffix("/__init__").removesuffix("/index")


def _shared_tail(first: str, second: str) -> int:
    """How many trailing path segments two paths have in common."""
    a, b = first.split("/"), second.split("/")
    shared = 0
    while shared < min(len(a), len(b)) and a[-1 - shared] == b[-1 - shared]:
        shared += 1
    return shared


@dataclass
class _SymbolCandidate:
    ref: SymbolRef
    hits: list[tuple[float, ChunkMatch]] = field(default_factory=list)


# A symbol's retrieval score and evidence, and its cue boost and evidence.
_SymbolParts = tuple[tuple[float, list[Evidence]], tuple[float, tuple[Evidence, ...]]]


@dataclass
class _FileCandidate:
    file_id: str
    relative_path: str
    language: str
    hits: list[tuple[float, ChunkMatch]] = field(default_factory=list)


@dataclass(frozen=True)
class _Counts:
    """Counts over one request's candidates: a name, class or word many of them share points
    at each of them less."""

    names: Counter[str]  # name → symbols found by looking names of the question up
    members: Counter[str]  # class scope → candidate methods of it
    words: Counter[str]  # name word → candidates whose name has it

    @classmethod
    def of(cls, request: RankingInput) -> _Counts:
        candidates = {
            *(c.symbol for c in request.chunks if c.symbol is not None),
            *request.named_symbols,
            *(n.symbol for n in request.graph_neighbors),
        }
        return cls(
            names=Counter(ref.name for ref in request.named_symbols),
            members=Counter(
                owner
                for ref in candidates
                if ref.kind in MEMBER_KINDS and (owner := member_owner(ref.scope_name))
            ),
            words=Counter(word for ref in candidates for word in set(name_words_of(ref.name))),
        )


@dataclass(frozen=True)
class _Scored:
    raw: float  # before the path-role factor
    score: float
    evidence: tuple[Evidence, ...]
    cue_evidence: tuple[Evidence, ...]


def lifted_roles(request: RankingInput) -> frozenset[PathRole]:
    """The path roles a request is about, which the ranking does not de-rank: tests when the
    question asks about them (or the caller includes them), documentation when it asks what
    the documentation says."""
    roles = set()
    if request.include_tests or request.cues.about_tests:
        roles.add(PathRole.TEST)
    if request.cues.about_docs:
        roles.add(PathRole.DOCS)
    return frozenset(roles)


class RankingV1:
    """Aggregate chunk hits to symbols and files (max + multi-hit bonus), add boosts for names,
    paths and stack-trace frames the question mentions, de-rank tests/docs/examples/vendored
    and generated code unless the question asks for it (tests, docs) or names the file."""

    name = "v1"

    def __init__(self, weights: RankingWeights | None = None) -> None:
        self.weights = weights or RankingWeights()

    def rank(self, request: RankingInput) -> Ranking:
        w = self.weights
        top = max((c.score for c in request.chunks), default=0.0)
        symbols: dict[str, _SymbolCandidate] = {}
        files: dict[str, _FileCandidate] = {}
        for chunk in sorted(request.chunks, key=lambda c: c.rank):
            normalized = chunk.score / top if top > 0 else 1.0 / max(chunk.rank, 1)
            file = files.setdefault(
                chunk.file_id, _FileCandidate(chunk.file_id, chunk.relative_path, chunk.language)
            )
            file.hits.append((normalized, chunk))
            if chunk.symbol is not None:
                candidate = symbols.setdefault(chunk.symbol.node_id, _SymbolCandidate(chunk.symbol))
                candidate.hits.append((normalized, chunk))
        for ref in (*request.named_symbols, *request.file_symbols):
            symbols.setdefault(ref.node_id, _SymbolCandidate(ref))
            files.setdefault(
                ref.file_id, _FileCandidate(ref.file_id, ref.relative_path, ref.language)
            )

        for match in file_list_matches(request):
            # A file only a file list found competes on what the question says about it.
            files.setdefault(
                match.file_id,
                _FileCandidate(match.file_id, match.relative_path, match.language),
            )

        lifted = lifted_roles(request)
        counts = _Counts.of(request)
        file_paths = {f.file_id: f.relative_path for f in files.values()}
        file_cues = {
            file_id: self._file_cues(path, request.cues) for file_id, path in file_paths.items()
        }

        # What a symbol's chunks and the question's cues give it: scored twice with graph
        # neighbours (before and after their boosts), worked out once.
        parts: dict[str, _SymbolParts] = {}

        def parts_of(candidate: _SymbolCandidate) -> _SymbolParts:
            found = parts.get(candidate.ref.node_id)
            if found is None:
                found = parts[candidate.ref.node_id] = (
                    self._retrieval(candidate.hits),
                    self._symbol_cues(candidate.ref, request.cues, counts),
                )
            return found

        graph_boosts: dict[str, tuple[float, Evidence]] = {}
        if request.graph_neighbors and w.graph:
            first = {
                node_id: self._score_symbol(
                    candidate,
                    parts_of(candidate),
                    file_cues.get(candidate.ref.file_id, (0.0, ()))[0],
                    lifted,
                ).score
                for node_id, candidate in symbols.items()
            }
            names = {n: c.ref.scope_name or c.ref.name for n, c in symbols.items()}
            graph_boosts = self._graph_boosts(request.graph_neighbors, first, names)
            for neighbor in request.graph_neighbors:
                ref = neighbor.symbol
                if ref.node_id in graph_boosts and ref.node_id not in symbols:
                    symbols[ref.node_id] = _SymbolCandidate(ref)
                    files.setdefault(
                        ref.file_id, _FileCandidate(ref.file_id, ref.relative_path, ref.language)
                    )
                    if ref.file_id not in file_cues:
                        file_cues[ref.file_id] = self._file_cues(ref.relative_path, request.cues)

        ranked_symbols: list[RankedSymbol] = []
        best_symbol: dict[str, _Scored] = {}
        for candidate in symbols.values():
            path_boost = file_cues.get(candidate.ref.file_id, (0.0, ()))[0]
            scored = self._score_symbol(
                candidate,
                parts_of(candidate),
                path_boost,
                lifted,
                graph_boosts.get(candidate.ref.node_id),
            )
            ranked_symbols.append(
                RankedSymbol(
                    symbol=candidate.ref,
                    score=scored.score,
                    evidence=scored.evidence,
                    chunk_ids=tuple(c.chunk_id for _, c in _best_first(candidate.hits)),
                )
            )
            current = best_symbol.get(candidate.ref.file_id)
            if current is None or scored.raw > current.raw:
                best_symbol[candidate.ref.file_id] = scored
        ranked_symbols.sort(key=_symbol_order)

        symbols_of_file: dict[str, list[RankedSymbol]] = {}
        for ranked_symbol in ranked_symbols:
            symbols_of_file.setdefault(ranked_symbol.symbol.file_id, []).append(ranked_symbol)
        ranked_files: list[RankedFile] = []
        for file in files.values():
            ranked_files.append(
                self._score_file(
                    file,
                    file_cues[file.file_id],
                    best_symbol.get(file.file_id),
                    symbols_of_file.get(file.file_id, []),
                    lifted,
                )
            )
        ranked_files.sort(key=lambda f: (-f.score, f.relative_path, f.file_id))
        if w.file_context:
            ranked_symbols = self._with_file_context(ranked_symbols, ranked_files)
        return Ranking(
            files=tuple(ranked_files[: request.max_files]),
            symbols=tuple(ranked_symbols[: request.max_symbols]),
        )

    def _with_file_context(
        self, symbols: list[RankedSymbol], files: list[RankedFile]
    ) -> list[RankedSymbol]:
        """Add a share of the file's score to each of its symbols: where the change goes is
        decided by the file first, then by the symbol inside it."""
        share = self.weights.file_context
        file_scores = {f.file_id: f.score for f in files}
        lifted = []
        for ranked in symbols:
            file_score = file_scores.get(ranked.symbol.file_id, 0.0)
            added = share * file_score
            evidence = ranked.evidence
            if added:
                evidence = self._with_evidence(
                    evidence, Evidence("file", "a share of its file's score", round(added, 4))
                )
            lifted.append(
                RankedSymbol(ranked.symbol, ranked.score + added, evidence, ranked.chunk_ids)
            )
        lifted.sort(key=_symbol_order)
        return lifted

    def _with_evidence(
        self, evidence: tuple[Evidence, ...], extra: Evidence
    ) -> tuple[Evidence, ...]:
        """``extra`` before the penalties (which always show last), within max_evidence: the
        weakest retrieval evidence makes room."""
        penalties = [e for e in evidence if e.signal == "path_role"]
        others = [e for e in evidence if e.signal != "path_role"]
        room = max(self.weights.max_evidence - len(penalties) - 1, 0)
        while len(others) > room:
            retrieval = [e for e in others if e.chunk_id]
            others.remove(min(retrieval, key=lambda e: e.weight) if retrieval else others[-1])
        return (*others, extra, *penalties)

    def _graph_boosts(
        self,
        neighbors: Sequence[GraphNeighbor],
        seed_scores: Mapping[str, float],
        seed_names: Mapping[str, str],
    ) -> dict[str, tuple[float, Evidence]]:
        """The best propagated boost of each neighbour over its seeds."""
        w = self.weights
        factors = {
            ("contains", False): (w.graph_contains, "a member of"),
            ("calls", False): (w.graph_calls, "called by"),
            ("calls", True): (w.graph_called_by, "a caller of"),
            ("inherits", False): (w.graph_inherits, "a base class of"),
            ("inherits", True): (w.graph_inherits, "a subclass of"),
        }
        boosts: dict[str, tuple[float, Evidence]] = {}
        for neighbor in neighbors:
            factor, how = factors.get((neighbor.relation, neighbor.reverse), (0.0, ""))
            seed_score = seed_scores.get(neighbor.seed_node_id, 0.0)
            boost = min(w.graph * factor * seed_score, w.graph_cap)
            if boost <= 0:
                continue
            current = boosts.get(neighbor.symbol.node_id)
            if current is None or boost > current[0]:
                seed = seed_names.get(neighbor.seed_node_id, "a top symbol")
                boosts[neighbor.symbol.node_id] = (
                    boost,
                    Evidence("graph", f"{how} {seed}, which ranks high", round(boost, 4)),
                )
        return boosts

    def _score_symbol(
        self,
        candidate: _SymbolCandidate,
        parts: _SymbolParts,
        file_path_boost: float,
        lifted: frozenset[PathRole],
        graph_boost: tuple[float, Evidence] | None = None,
    ) -> _Scored:
        w = self.weights
        ref = candidate.ref
        (retrieval, retrieval_evidence), (boost, cue_evidence) = parts
        if graph_boost is not None:
            boost += graph_boost[0]
            cue_evidence += (graph_boost[1],)
        if file_path_boost:
            share = file_path_boost * w.path_share_for_symbols
            boost += share
            cue_evidence += (Evidence("path", "its file is named in the question", share),)
        raw = retrieval + min(boost, w.boost_cap)
        if ref.kind in MODULE_KINDS:
            raw *= w.module_factor
        score, role_evidence = self._role(ref.relative_path, raw, lifted, bool(file_path_boost))
        evidence = self._top_evidence(cue_evidence, retrieval_evidence, role_evidence)
        return _Scored(raw=raw, score=score, evidence=evidence, cue_evidence=cue_evidence)

    def _score_file(
        self,
        file: _FileCandidate,
        cues: tuple[float, tuple[Evidence, ...]],
        best_symbol: _Scored | None,
        symbols: list[RankedSymbol],
        lifted: frozenset[PathRole],
    ) -> RankedFile:
        w = self.weights
        retrieval, retrieval_evidence = self._retrieval(file.hits)
        path_boost, path_evidence = cues
        raw = retrieval
        inherited: tuple[Evidence, ...] = ()
        if best_symbol is not None and best_symbol.raw > retrieval:
            # The best symbol decides, and the file keeps what its other matches add.
            others = retrieval - max((n for n, _ in file.hits), default=0.0)
            raw = best_symbol.raw + w.file_keeps_multi_hit * others
            inherited = tuple(e for e in best_symbol.cue_evidence if e.signal != "path")
        raw += path_boost
        score, role_evidence = self._role(file.relative_path, raw, lifted, bool(path_boost))
        return RankedFile(
            file_id=file.file_id,
            relative_path=file.relative_path,
            language=file.language,
            score=score,
            symbols=tuple(symbols[: w.symbols_per_file]),
            evidence=self._top_evidence(
                path_evidence + inherited, retrieval_evidence, role_evidence
            ),
            chunk_ids=tuple(c.chunk_id for _, c in _best_first(file.hits)),
        )

    def _retrieval(self, hits: list[tuple[float, ChunkMatch]]) -> tuple[float, list[Evidence]]:
        w = self.weights
        if not hits:
            return 0.0, []
        ordered = _best_first(hits)
        score = aggregate_hits((n for n, _ in ordered), w.multi_hit_bonus, w.multi_hit_cap)
        evidence: list[Evidence] = []
        for normalized, chunk in ordered:
            evidence.extend(_retrieval_evidence(normalized, chunk))
        if len(ordered) > 1:
            bonus = score - ordered[0][0]
            evidence.append(
                Evidence("multi_hit", f"{len(ordered)} matching chunks", round(bonus, 4))
            )
        return score, evidence

    def _symbol_cues(
        self, ref: SymbolRef, cues: QuestionCues, counts: _Counts
    ) -> tuple[float, tuple[Evidence, ...]]:
        w = self.weights
        found: list[Evidence] = []
        if ref.kind in MODULE_KINDS:
            # A module the question names (an import, a dotted path) is scored through its
            # file's module cue, which its symbols share; as a symbol it would count the same
            # mention twice more (dotted name and identifier) and outrank what changes.
            return 0.0, ()
        for dotted_name in cues.dotted_names:
            if _dotted_matches(dotted_name, ref):
                found.append(
                    Evidence(
                        "dotted_name", f"`{dotted_name}` names {ref.qualified_name}", w.dotted_name
                    )
                )
                break
        for identifier in cues.identifiers:
            if identifier == ref.name:
                weight = w.identifier
                if identifier.isalpha() and identifier.islower():
                    # `put`, `data`, `requests` in a snippet: words as often as names.
                    weight = w.identifier_plain_word
                if identifier in cues.in_title:
                    weight *= 1.0 + w.title_name
                namesakes = counts.names.get(ref.name, 1)
                if w.identifier_ambiguity and namesakes > 1:
                    weight /= math.sqrt(namesakes)
                detail = f"`{identifier}` is its name"
                if namesakes > 1:
                    detail += f" ({namesakes} symbols have it)"
                found.append(Evidence("identifier", detail, round(weight, 4)))
                break
        else:
            lowered = ref.name.lower()
            for identifier in cues.identifiers:
                if identifier.lower() == lowered:
                    found.append(
                        Evidence(
                            "identifier",
                            f"`{identifier}` is its name (ignoring case)",
                            w.identifier_casefold,
                        )
                    )
                    break
            else:
                part = _identifier_part_of(cues.identifiers, ref.name)
                if part is not None and w.identifier_part:
                    identifier, share = part
                    found.append(
                        Evidence(
                            "identifier",
                            f"`{identifier}` is part of its name",
                            round(w.identifier_part * share, 4),
                        )
                    )
        owner = member_owner(ref.scope_name)
        if w.member_of_named and owner and ref.kind in MEMBER_KINDS:
            owner_name = owner.rsplit(".", 1)[-1]
            if owner_name in cues.identifiers or any(
                d == owner or d.endswith("." + owner_name) for d in cues.dotted_names
            ):
                # Naming a class points at each of its methods less the more of them are
                # candidates (a class used in a snippet brings many).
                siblings = max(counts.members.get(owner, 1), 1)
                found.append(
                    Evidence(
                        "member",
                        f"a method of {owner_name}, which the question names",
                        round(w.member_of_named / math.sqrt(siblings), 4),
                    )
                )
        named_exactly = any(e.signal in ("identifier", "dotted_name") for e in found)
        has_name_words = ref.kind in CALLABLE_KINDS or ref.kind in CONTAINER_KINDS
        if w.name_words and not named_exactly and has_name_words:
            words = name_words_of(ref.name)
            shared = [p for p in words if _uses_word(cues.words, p)]
            if shared:
                # A word many candidates' names share (the topic of the question) tells them
                # apart less than a rare one: each word counts 1/sqrt(candidates using it).
                rarity = sum(1.0 / math.sqrt(max(counts.words.get(p, 1), 1)) for p in shared)
                weight = w.name_words * rarity / len(words)
                found.append(
                    Evidence(
                        "name_words", f"the question uses {', '.join(shared)}", round(weight, 4)
                    )
                )
        for frame in cues.frames:
            if not match_path(frame.path, ref.relative_path):
                continue
            if ref.kind not in MODULE_KINDS and ref.start_line <= frame.line <= ref.end_line:
                found.append(
                    Evidence(
                        "stacktrace",
                        f"frame {frame.path}:{frame.line} is inside it",
                        w.stacktrace_line,
                    )
                )
                break
            if frame.function and frame.function == ref.name:
                found.append(
                    Evidence(
                        "stacktrace",
                        f"frame {frame.path}:{frame.line} is in function {frame.function}",
                        w.stacktrace_function,
                    )
                )
                break
        return sum(e.weight for e in found), tuple(found)

    def _file_cues(
        self, relative_path: str, cues: QuestionCues
    ) -> tuple[float, tuple[Evidence, ...]]:
        w = self.weights
        best: Evidence | None = None
        weights = {
            "exact": w.path,
            "suffix": w.path,
            "basename": w.path_basename,
            "directory": w.path_directory,
        }
        for path in cues.paths:
            how = match_path(path, relative_path)
            if how and (best is None or weights[how] > best.weight):
                best = Evidence("path", f"the question names {path} ({how} match)", weights[how])
        found = [best] if best is not None else []
        module = module_of_path(relative_path)
        for module_path in cues.module_paths:
            if module and (module == module_path or module.endswith("/" + module_path)):
                found.append(
                    Evidence(
                        "module",
                        f"the question names module {module_path.replace('/', '.')}",
                        w.module_path,
                    )
                )
                break
        for frame in cues.frames:
            if match_path(frame.path, relative_path) in ("exact", "suffix", "basename"):
                found.append(
                    Evidence(
                        "stacktrace",
                        f"a stack-trace frame is in this file ({frame.path}:{frame.line})",
                        w.stacktrace_file,
                    )
                )
                break
        return sum(e.weight for e in found), tuple(found)

    def _role(
        self, relative_path: str, raw: float, lifted: frozenset[PathRole], named_by_question: bool
    ) -> tuple[float, tuple[Evidence, ...]]:
        role = classify_path(relative_path)
        factor = self.weights.role_factors.get(role, 1.0)
        if role == PathRole.SOURCE or factor == 1.0 or named_by_question:
            return raw, ()
        if role == PathRole.DOCS and role in lifted and self.weights.docs_asked_for:
            return raw + self.weights.docs_asked_for, (
                Evidence(
                    "docs",
                    "the question asks what the documentation says",
                    self.weights.docs_asked_for,
                ),
            )
        if role in lifted:
            return raw, ()
        score = raw * factor
        return score, (
            Evidence(
                "path_role",
                f"{role.value} path, ranked lower (x{factor:g})",
                round(score - raw, 4),
            ),
        )

    def _top_evidence(
        self,
        cue_evidence: Iterable[Evidence],
        retrieval_evidence: Iterable[Evidence],
        role_evidence: Iterable[Evidence],
    ) -> tuple[Evidence, ...]:
        """Cue evidence first, then the strongest retrieval evidence; a penalty always shows."""
        cues = list(cue_evidence)
        penalties = list(role_evidence)
        room = max(self.weights.max_evidence - len(cues) - len(penalties), 0)
        retrieval = sorted(retrieval_evidence, key=lambda e: -e.weight)[:room]
        return tuple(cues + retrieval + penalties)


def _retrieval_evidence(normalized: float, chunk: ChunkMatch) -> list[Evidence]:
    lines = f"lines {chunk.start_line}-{chunk.end_line}"
    lexical = 1.0 / (RRF_K + chunk.lexical_rank) if chunk.lexical_rank else 0.0
    vector = 1.0 / (RRF_K + chunk.vector_rank) if chunk.vector_rank else 0.0
    if not lexical and not vector:
        return [
            Evidence(
                "retrieval", f"{lines}: rank {chunk.rank}", round(normalized, 4), chunk.chunk_id
            )
        ]
    evidence = []
    if lexical:
        evidence.append(
            Evidence(
                "bm25",
                f"{lines}: lexical rank {chunk.lexical_rank} (BM25 {chunk.lexical_score:.2f})",
                round(normalized * lexical / (lexical + vector), 4),
                chunk.chunk_id,
            )
        )
    if vector:
        evidence.append(
            Evidence(
                "vector",
                f"{lines}: vector rank {chunk.vector_rank} (similarity {chunk.vector_score:.2f})",
                round(normalized * vector / (lexical + vector), 4),
                chunk.chunk_id,
            )
        )
    return evidence


@functools.lru_cache(maxsize=1 << 14)
def _identifier_part_of(identifiers: tuple[str, ...], name: str) -> tuple[str, float] | None:
    """The identifier whose words run inside the words of the longer ``name`` (`world_to_pixel`
    in `world_to_pixel_values`, `subs` in `_eval_subs`), with the share of the name's words it
    covers (the largest share wins). Identifiers shorter than four characters are left out.
    Cached: names repeat across a question's candidates."""
    name_parts = split_identifier(name)[1:]
    best: tuple[str, float] | None = None
    for identifier in identifiers:
        parts = split_identifier(identifier)[1:] or [identifier.lower()]
        if len(identifier) < 4 or len(parts) >= len(name_parts):
            continue
        size = len(parts)
        if any(name_parts[i : i + size] == parts for i in range(len(name_parts) - size + 1)):
            share = size / len(name_parts)
            if best is None or share > best[1]:
                best = (identifier, share)
    return best


@functools.lru_cache(maxsize=1 << 14)
def _uses_word(words: frozenset[str], part: str) -> bool:
    """The question uses ``part`` as a word or as the stem of one (cancel → cancelling).
    Cached: one question's words meet the same name parts for hundreds of candidates."""
    return part in words or (len(part) >= 4 and any(w.startswith(part) for w in words))


def _dotted_matches(dotted_name: str, ref: SymbolRef) -> bool:
    return _names_dotted(dotted_name, ref.qualified_name, ref.scope_name)


@functools.lru_cache(maxsize=1 << 14)
def _names_dotted(dotted_name: str, qualified_name: str, scope_name: str) -> bool:
    for name in (qualified_name, scope_name):
        name = dotted_scope(name)
        if name and (name == dotted_name or name.endswith("." + dotted_name)):
            return True
    return False


def _best_first(hits: list[tuple[float, ChunkMatch]]) -> list[tuple[float, ChunkMatch]]:
    return sorted(hits, key=lambda item: (-item[0], item[1].rank))


def _symbol_order(symbol: RankedSymbol) -> tuple[float, str, int, str]:
    ref = symbol.symbol
    return (-symbol.score, ref.relative_path, ref.start_line, ref.node_id)
