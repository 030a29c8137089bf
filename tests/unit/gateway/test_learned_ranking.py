"""The learned ranker's parts: feature values on constructed cases, the candidates dump round
trip (training sees what the gateway ranked), the tree and linear evaluators, model loading
errors, and the shipped model itself."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from locus.gateway.domain.candidates import (
    CandidatesFormatError,
    candidates_from_json,
    candidates_to_json,
)
from locus.gateway.domain.features import (
    FILE_FEATURES,
    SYMBOL_FEATURES,
    VECTOR_SCORED_SYMBOLS,
    candidate_features,
    vector_scored_symbols,
    with_file_scores,
)
from locus.gateway.domain.learned_ranking import (
    LearnedRanking,
    RankerModel,
    RankerModelError,
    TreeEnsemble,
)
from locus.gateway.domain.question_cues import extract_cues
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import (
    ChunkMatch,
    FileHistory,
    FileMatch,
    GraphNeighbor,
    PartHit,
    Ranking,
    RankingInput,
    SymbolRef,
    candidate_paths,
)

pytestmark = pytest.mark.unit


def ref(
    name: str, path: str, kind: str = "function", lines: tuple[int, int] = (1, 20)
) -> SymbolRef:
    return SymbolRef(
        node_id=f"n:{path}:{name}",
        name=name.rsplit(".", 1)[-1],
        qualified_name=name,
        scope_name=name,
        kind=kind,
        file_id=f"f:{path}",
        relative_path=path,
        language="python",
        start_line=lines[0],
        end_line=lines[1],
    )


def chunk(
    rank: int,
    score: float,
    owner: SymbolRef,
    *,
    lexical: int = 0,
    vector: int = 0,
    lexical_score: float = 0.0,
    vector_score: float = 0.0,
) -> ChunkMatch:
    return ChunkMatch(
        chunk_id=f"c{rank}",
        file_id=owner.file_id,
        relative_path=owner.relative_path,
        language="python",
        start_line=owner.start_line,
        end_line=owner.end_line,
        rank=rank,
        score=score,
        lexical_rank=lexical,
        vector_rank=vector,
        lexical_score=lexical_score,
        vector_score=vector_score,
        symbol=owner,
    )


RETRY = ref("upload_with_retry", "src/client/uploads.py", lines=(10, 49))
HELPER = ref("Uploader.send", "src/client/transport.py", kind="method")
TEMPLATE = ref("bug_report", ".github/ISSUE_TEMPLATE/bug_report.yml", kind="module")
CALLEE = ref("backoff_delay", "src/client/backoff.py")
SIBLING = ref("max_attempts", "src/client/uploads.py", lines=(50, 60))

QUESTION = "Uploads give up too early\n\n`upload_with_retry` stops after 3 attempts; see uploads.py"


def request() -> RankingInput:
    return RankingInput(
        cues=extract_cues(QUESTION),
        chunks=[
            chunk(1, 0.05, TEMPLATE, lexical=1, lexical_score=12.0),
            chunk(2, 0.04, RETRY, lexical=2, lexical_score=9.0, vector=1, vector_score=0.71),
            chunk(3, 0.02, HELPER, lexical=5, lexical_score=3.0),
        ],
        named_symbols=[RETRY],
        graph_neighbors=[GraphNeighbor(CALLEE, RETRY.node_id, "calls", False)],
        file_symbols=[RETRY, SIBLING],
        file_hits=[
            FileMatch("f:src/client/config.py", "src/client/config.py", "python", 1, 30.0, 12.0, 3),
            FileMatch(RETRY.file_id, RETRY.relative_path, "python", 2, 15.0, 9.0, 2),
        ],
        whole_file_hits=[
            FileMatch(RETRY.file_id, RETRY.relative_path, "python", 1, 40.0, 40.0, 5),
            FileMatch("f:src/client/retry.md", "src/client/retry.md", "markdown", 2, 20.0, 20.0, 1),
            FileMatch(HELPER.file_id, HELPER.relative_path, "python", 3, 10.0, 10.0, 4),
        ],
        # The title alone ("Uploads give up too early") finds transport.py first; the opening
        # finds uploads.py only; a file only a part found (early.md) is a candidate of its own.
        whole_file_parts={
            "title": [
                FileMatch(HELPER.file_id, HELPER.relative_path, "python", 1, 8.0, 8.0, 4),
                FileMatch(RETRY.file_id, RETRY.relative_path, "python", 2, 2.0, 2.0, 5),
                FileMatch("f:docs/early.md", "docs/early.md", "markdown", 3, 1.0, 1.0, 1),
            ],
            "opening": [FileMatch(RETRY.file_id, RETRY.relative_path, "python", 1, 6.0, 6.0, 5)],
        },
        # The chunks each part alone finds: the title's best is in transport.py's send, then
        # inside upload_with_retry (twice), inside max_attempts, and in a file that is no
        # candidate; the opening's only chunk spans more than any symbol of uploads.py.
        part_chunks={
            "title": [
                PartHit(HELPER.file_id, HELPER.relative_path, 1, 20, 1, 10.0),
                PartHit(RETRY.file_id, RETRY.relative_path, 12, 30, 2, 5.0),
                PartHit(RETRY.file_id, RETRY.relative_path, 50, 55, 3, 4.0),
                PartHit(RETRY.file_id, RETRY.relative_path, 31, 40, 4, 2.0),
                PartHit("f:src/other.py", "src/other.py", 1, 5, 5, 1.0),
            ],
            "opening": [PartHit(RETRY.file_id, RETRY.relative_path, 1, 200, 1, 3.0)],
        },
        # 200 commits read: uploads.py changed in 8 (the last one 4 commits ago) and their
        # messages match the question best; transport.py changed most often, long ago.
        file_history=[
            FileHistory(RETRY.relative_path, 8, 4, 0.9, 6.0),
            FileHistory(HELPER.relative_path, 16, 99, 1.0, 1.5),
            FileHistory("src/client/config.py", 2, 0, 0.5, 0.0),
        ],
        history_commits=200,
        max_files=10,
        max_symbols=10,
    )


def features_by_name(names: tuple[str, ...], row: list[float]) -> dict[str, float]:
    assert len(row) == len(names)
    return dict(zip(names, row, strict=True))


def test_each_feature_of_a_symbol_has_the_value_its_case_implies() -> None:
    features = candidate_features(request(), RankingV1())
    rows = {
        s.symbol.node_id: features_by_name(SYMBOL_FEATURES, row)
        for s, row in zip(features.ranking.symbols, features.symbol_rows, strict=True)
    }
    retry = rows[RETRY.node_id]
    assert retry["cue_identifier"] > 0  # the question names it in a code span
    assert retry["named"] == 1.0  # it was found by name lookup
    assert retry["best_lexical_rank_recip"] == pytest.approx(1 / 2)
    assert retry["best_lexical_score_ratio"] == pytest.approx(9.0 / 12.0)
    assert retry["best_vector_rank_recip"] == 1.0
    assert retry["best_vector_score"] == pytest.approx(0.71)
    assert retry["vector_hits"] == 1.0
    assert retry["lexical_hits"] == 1.0
    assert retry["kind_function"] == 1.0
    assert retry["kind_method"] == 0.0
    assert retry["log_lines"] == pytest.approx(math.log1p(40))
    assert retry["role_source"] == 1.0
    assert retry["cue_path"] > 0  # uploads.py is named in the question
    assert retry["name_word_share"] == pytest.approx(2 / 2)  # upload, retry (with is short)
    assert retry["q_vectors_present"] == 1.0
    assert retry["q_has_code_block"] == 0.0
    assert retry["q_identifiers"] >= 1

    assert retry["outline_only"] == 0.0
    assert retry["file_list_rank_recip"] == 0.5  # its file is second in the file list
    sibling = rows[SIBLING.node_id]
    assert sibling["outline_only"] == 1.0  # no hit, lookup or graph hop brought it
    assert sibling["hits"] == 0.0
    assert sibling["file_v1_rank_recip"] == 1.0
    assert sibling["whole_file_rank_recip"] == 1.0  # a symbol has its file's whole-file rank
    assert rows[HELPER.node_id]["whole_file_score_ratio"] == 0.25
    assert rows[CALLEE.node_id]["whole_file_rank_recip"] == 0.0
    # ... and its file's place in each part's list (uploads.py: second for the title)
    assert sibling["file_part_title_rank_recip"] == 0.5
    assert sibling["file_part_opening_share"] == 1.0
    assert rows[HELPER.node_id]["file_part_title_score"] == 8.0
    assert rows[CALLEE.node_id]["file_part_title_score"] == 0.0
    assert not any(name.startswith("history_") for name in SYMBOL_FEATURES)  # files only

    callee = rows[CALLEE.node_id]
    assert callee["graph_calls"] == 1.0
    assert callee["graph_called_by"] == 0.0
    assert callee["outline_only"] == 0.0
    assert callee["cue_graph"] > 0
    assert callee["hits"] == 0.0

    template = rows[TEMPLATE.node_id]
    assert template["role_template"] == 1.0
    assert template["role_source"] == 0.0
    assert template["path_role_penalty"] < 0
    assert template["kind_module"] == 1.0


def test_each_feature_of_a_file_has_the_value_its_case_implies() -> None:
    features = candidate_features(request(), RankingV1())
    rows = {
        f.relative_path: features_by_name(FILE_FEATURES, row)
        for f, row in zip(features.ranking.files, features.file_rows, strict=True)
    }
    uploads = rows["src/client/uploads.py"]
    assert uploads["cue_path"] > 0
    assert uploads["best_symbol_cue_identifier"] > 0
    assert uploads["named_symbols"] == 1.0
    assert uploads["symbols"] == 2.0  # upload_with_retry, max_attempts
    assert uploads["path_words_used"] == 1.0  # "uploads" is a word of the question
    assert uploads["path_depth"] == 3.0
    assert rows["src/client/backoff.py"]["graph_symbols"] == 1.0
    assert rows["src/client/backoff.py"]["file_list_rank_recip"] == 0.0
    assert uploads["file_list_rank_recip"] == 0.5
    assert uploads["file_list_score_ratio"] == 0.5
    assert uploads["file_list_best_ratio"] == 0.75
    assert uploads["file_list_chunks"] == 2.0
    # Only the file list found config.py: a candidate without hits or symbols.
    config = rows["src/client/config.py"]
    assert config["file_list_rank_recip"] == 1.0
    assert config["hits"] == 0.0
    assert config["symbols"] == 0.0
    # Retrieval's whole-file list: rank, score over the list's best, score over the mean of
    # its (here three) best.
    assert uploads["whole_file_rank_recip"] == 1.0
    assert uploads["whole_file_score_ratio"] == 1.0
    assert uploads["whole_file_lift"] == pytest.approx(40.0 / (70.0 / 3))
    transport = rows["src/client/transport.py"]
    assert transport["whole_file_rank_recip"] == pytest.approx(1 / 3)
    assert transport["whole_file_score_ratio"] == 0.25
    # Only the whole-file list found the notes: a candidate of its own; unlisted files get 0.
    notes = rows["src/client/retry.md"]
    assert notes["whole_file_rank_recip"] == 0.5
    assert notes["hits"] == 0.0
    assert config["whole_file_rank_recip"] == 0.0
    assert config["whole_file_lift"] == 0.0
    # Each part of the question searched alone: the file's BM25 and its share of the part's
    # best; a file the part did not list has 0.
    assert transport["part_title_score"] == 8.0
    assert transport["part_title_share"] == 1.0
    assert transport["part_title_rank_recip"] == 1.0
    assert uploads["part_title_score"] == 2.0
    assert uploads["part_title_share"] == 0.25
    assert uploads["part_title_rank_recip"] == 0.5
    assert uploads["part_opening_score"] == 6.0
    assert uploads["part_opening_share"] == 1.0
    assert transport["part_opening_share"] == transport["part_opening_rank_recip"] == 0.0
    assert config["part_title_score"] == config["part_title_share"] == 0.0
    # Only the title found the notes on giving up early: a candidate, with the title's columns
    # and none of the question's whole-file list.
    early = rows["docs/early.md"]
    assert early["part_title_rank_recip"] == pytest.approx(1 / 3)
    assert early["part_title_share"] == 0.125
    assert early["whole_file_rank_recip"] == 0.0
    assert early["hits"] == early["symbols"] == 0.0
    # Change history: how often, how lately, where among the history's files, how the
    # messages of its commits match (over the best candidate, and the rank among them).
    assert uploads["history_present"] == 1.0
    assert uploads["history_log_commits"] == pytest.approx(math.log1p(8))
    assert uploads["history_commits_ratio"] == 0.5  # transport.py changed 16 times
    assert uploads["history_recency"] == pytest.approx(1 / 5)
    assert uploads["history_percentile"] == 0.9
    assert uploads["history_message_ratio"] == 1.0
    assert uploads["history_message_rank_recip"] == 1.0
    assert transport["history_message_ratio"] == 0.25
    assert transport["history_message_rank_recip"] == 0.5
    assert transport["history_recency"] == pytest.approx(1 / 100)
    assert config["history_recency"] == 1.0  # changed in the newest commit
    assert config["history_message_rank_recip"] == 0.0  # no message matched
    assert notes["history_present"] == 1.0  # the project has history; the file has none
    assert notes["history_commits_ratio"] == 0.0
    assert notes["history_log_commits"] == 0.0
    template = rows[".github/ISSUE_TEMPLATE/bug_report.yml"]
    assert template["role_template"] == 1.0
    assert template["best_lexical_rank_recip"] == 1.0
    # The hand ranking's view: the file the question names outranks the template.
    assert uploads["v1_rank_recip"] == 1.0
    assert uploads["v1_score_ratio"] == 1.0


def test_a_part_speaks_for_the_innermost_candidate_symbol_that_holds_its_chunk() -> None:
    uploader = ref("Uploader", HELPER.relative_path, kind="class", lines=(1, 40))
    features = candidate_features(
        replace(request(), file_symbols=[RETRY, SIBLING, uploader]), RankingV1()
    )
    symbols = {
        s.symbol.node_id: features_by_name(SYMBOL_FEATURES, row)
        for s, row in zip(features.ranking.symbols, features.symbol_rows, strict=True)
    }
    # The title's first chunk lies in send (lines 1-20) and in its class (1-40): the method,
    # the innermost, takes it.
    assert symbols[HELPER.node_id]["part_title_chunk_share"] == 1.0
    assert symbols[HELPER.node_id]["part_title_chunk_rank_recip"] == 1.0
    assert symbols[uploader.node_id]["part_title_chunk_rank_recip"] == 0.0
    # upload_with_retry holds the second and the fourth chunk: it reads its best.
    retry = symbols[RETRY.node_id]
    assert retry["part_title_chunk_share"] == 0.5
    assert retry["part_title_chunk_rank_recip"] == 0.5
    sibling = symbols[SIBLING.node_id]
    assert sibling["part_title_chunk_share"] == 0.4
    assert sibling["part_title_chunk_rank_recip"] == pytest.approx(1 / 3)
    # No symbol holds the opening's chunk (lines 1-200); a symbol no chunk lies in reads 0.
    assert retry["part_opening_chunk_rank_recip"] == 0.0
    assert symbols[CALLEE.node_id]["part_title_chunk_share"] == 0.0
    files = {
        f.relative_path: features_by_name(FILE_FEATURES, row)
        for f, row in zip(features.ranking.files, features.file_rows, strict=True)
    }
    # A file reads its best chunk of each part, whichever symbol holds it (or none).
    uploads = files[RETRY.relative_path]
    assert uploads["part_title_chunk_share"] == 0.5
    assert uploads["part_title_chunk_rank_recip"] == 0.5
    assert uploads["part_opening_chunk_share"] == 1.0
    assert uploads["part_opening_chunk_rank_recip"] == 1.0
    assert files[HELPER.relative_path]["part_title_chunk_rank_recip"] == 1.0
    assert files[CALLEE.relative_path]["part_title_chunk_rank_recip"] == 0.0
    assert "src/other.py" not in files  # a part's chunk adds no candidate


def test_a_dump_reads_back_to_the_same_features() -> None:
    original = request()
    dumped = json.loads(json.dumps(candidates_to_json(QUESTION, original)))
    question, restored = candidates_from_json(dumped)
    assert question == QUESTION
    assert restored.chunks == list(original.chunks)
    assert restored.graph_neighbors == list(original.graph_neighbors)
    assert restored.whole_file_hits == list(original.whole_file_hits)
    assert restored.whole_file_parts == {
        part: list(hits) for part, hits in original.whole_file_parts.items()
    }
    assert restored.file_history == list(original.file_history)
    assert restored.part_chunks == {part: list(hits) for part, hits in original.part_chunks.items()}
    assert restored.history_commits == 200
    assert candidate_features(restored, RankingV1()) == candidate_features(original, RankingV1())
    scored = replace(original, symbol_similarity={RETRY.node_id: 0.62, HELPER.node_id: -0.1})
    _, restored = candidates_from_json(json.loads(json.dumps(candidates_to_json(QUESTION, scored))))
    assert restored.symbol_similarity == {RETRY.node_id: 0.62, HELPER.node_id: -0.1}


def test_each_vector_similarity_feature_has_the_value_its_case_implies() -> None:
    # retrieval ScoreSymbols: uploads.py's function is nearest the question, then transport.py's
    # method, then uploads.py's other function; backoff.py's was not scored (no vector yet); a
    # node that is no candidate is ignored.
    similarity = {
        RETRY.node_id: 0.62,
        HELPER.node_id: 0.55,
        SIBLING.node_id: 0.30,
        "n:not-a-candidate": 0.95,
    }
    with_vectors = replace(request(), symbol_similarity=similarity)
    features = candidate_features(with_vectors, RankingV1())
    symbols = {
        ranked.symbol.node_id: features_by_name(SYMBOL_FEATURES, row)
        for ranked, row in zip(features.ranking.symbols, features.symbol_rows, strict=True)
    }
    names = ("vector_scored", "vector_similarity", "vector_similarity_gap")
    assert [symbols[RETRY.node_id][n] for n in names] == pytest.approx([1.0, 0.62, 0.0])
    assert [symbols[HELPER.node_id][n] for n in names] == pytest.approx([1.0, 0.55, 0.07])
    assert [symbols[SIBLING.node_id][n] for n in names] == pytest.approx([1.0, 0.30, 0.32])
    assert [symbols[CALLEE.node_id][n] for n in names] == [0.0, 0.0, 1.0]
    assert [
        symbols[node.node_id]["vector_similarity_rank_recip"]
        for node in (RETRY, HELPER, SIBLING, CALLEE)
    ] == pytest.approx([1.0, 1 / 2, 1 / 3, 0.0])
    files = {
        ranked.relative_path: features_by_name(FILE_FEATURES, row)
        for ranked, row in zip(features.ranking.files, features.file_rows, strict=True)
    }
    # A file takes its best symbol's: uploads.py 0.62 (not its other function's 0.30).
    names = (
        "file_vector_scored",
        "file_vector_similarity",
        "file_vector_similarity_gap",
        "file_vector_similarity_rank_recip",
    )
    assert [files[RETRY.relative_path][n] for n in names] == pytest.approx([1.0, 0.62, 0.0, 1.0])
    assert [files[HELPER.relative_path][n] for n in names] == pytest.approx([1.0, 0.55, 0.07, 0.5])
    assert [files[CALLEE.relative_path][n] for n in names] == [0.0, 0.0, 1.0, 0.0]
    # Without vectors (a project whose vectors lane is not done), every row says so.
    plain = candidate_features(request(), RankingV1())
    for row in plain.file_rows:
        assert [features_by_name(FILE_FEATURES, row)[n] for n in names] == [0.0, 0.0, 1.0, 0.0]
    # The rest of every row is what it is without vectors.
    vector_columns = {i for i, n in enumerate(SYMBOL_FEATURES) if n.startswith("vector_")}
    for with_row, plain_row in zip(features.symbol_rows, plain.symbol_rows, strict=True):
        assert [v for i, v in enumerate(with_row) if i not in vector_columns] == [
            v for i, v in enumerate(plain_row) if i not in vector_columns
        ]


def test_only_a_model_that_reads_vector_similarity_asks_retrieval_for_it() -> None:
    def model(symbol_feature: str) -> RankerModel:
        files = {"kind": "trees", "features": ["v1_score"], "trees": stump(0, 0.5, 0.0, 1.0)}
        symbols = {"kind": "trees", "features": [symbol_feature], "trees": stump(0, 0.5, 0.0, 1.0)}
        return RankerModel.from_json(
            {"format": 1, "version": "t", "files": files, "symbols": symbols}
        )

    assert LearnedRanking(model("vector_similarity"), RankingV1()).uses_vectors
    # The vector lane's own hit columns are not the similarity: no ScoreSymbols for them.
    assert not LearnedRanking(model("vector_hits"), RankingV1()).uses_vectors
    # The shipped model was trained without it (measured, not adopted: bench/RESULTS.md).
    assert not LearnedRanking(RankerModel.load(), RankingV1()).uses_vectors


def test_the_symbols_scored_by_vectors_are_the_hand_rankings_first() -> None:
    hand = RankingV1()
    chosen = vector_scored_symbols(request(), hand)
    full = candidate_features(request(), hand).ranking.symbols
    assert chosen == [ranked.symbol for ranked in full[:VECTOR_SCORED_SYMBOLS]]
    assert {RETRY, HELPER, SIBLING, CALLEE} <= set(chosen)


def test_without_history_every_history_feature_is_zero() -> None:
    """A project outside git (or a dump made before history): no history feature is set,
    whatever the candidates."""
    dumped = candidates_to_json(QUESTION, request())
    for key in ("file_history", "history_fields", "history_commits"):
        del dumped[key]
    _, restored = candidates_from_json(dumped)
    assert restored.history_commits == 0
    features = candidate_features(restored, RankingV1())
    assert features.file_rows
    for row in features.file_rows:
        values = features_by_name(FILE_FEATURES, row)
        assert not any(v for n, v in values.items() if n.startswith("history_"))


def test_candidate_paths_are_every_file_a_ranking_can_hold() -> None:
    assert candidate_paths(request()) == [
        ".github/ISSUE_TEMPLATE/bug_report.yml",
        "src/client/uploads.py",
        "src/client/transport.py",
        "src/client/backoff.py",
        "src/client/config.py",
        "src/client/retry.md",
        "docs/early.md",
    ]


def test_a_dump_of_another_format_is_refused_with_the_reason() -> None:
    with pytest.raises(CandidatesFormatError, match="format 99"):
        candidates_from_json({"format": 99})
    with pytest.raises(CandidatesFormatError, match="malformed"):
        candidates_from_json({"format": 1, "question": "q"})


def stump(feature: int, threshold: float, low: float, high: float) -> dict:
    """One split: rows with feature <= threshold get ``low``."""
    return {
        "feature": [feature, -1, -1],
        "threshold": [threshold, 0.0, 0.0],
        "left": [1, 1, 2],
        "right": [2, 1, 2],
        "value": [0.0, low, high],
        "roots": [0],
        "depth": 1,
    }


def test_the_tree_evaluator_follows_splits_and_sums_trees() -> None:
    first = stump(0, 0.5, -1.0, 1.0)
    second = stump(1, 2.0, 0.25, 0.5)
    # Two trees in one table: the second's nodes follow the first's.
    merged = {
        "feature": first["feature"] + second["feature"],
        "threshold": first["threshold"] + second["threshold"],
        "left": first["left"] + [i + 3 for i in second["left"]],
        "right": first["right"] + [i + 3 for i in second["right"]],
        "value": first["value"] + second["value"],
        "roots": [0, 3],
        "depth": 1,
    }
    trees = TreeEnsemble.from_json(merged)
    rows = np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 3.0], [0.5, 2.0]])
    assert trees.predict(rows).tolist() == [-0.75, 1.25, 1.5, -0.75]


def test_the_table_evaluation_equals_walking_the_trees_of_the_shipped_model() -> None:
    """Small trees are evaluated through per-tree tables of leaves: the same leaves and sums
    as walking them, NaN (which goes right) included."""
    model = RankerModel.load()
    rng = np.random.default_rng(7)
    for target in (model.files, model.symbols):
        trees = target.predictor
        assert isinstance(trees, TreeEnsemble)
        assert trees.codes is not None
        rows = rng.normal(0.0, 2.0, (300, int(trees.feature.max()) + 1))
        rows[rng.random(rows.shape) < 0.05] = np.nan
        rows[:20] = 0.0
        assert np.array_equal(trees.predict(rows), trees.predict_by_walking(rows))


def test_trees_too_large_for_tables_are_walked() -> None:
    # A chain of 12 splits on feature 0: leaf value = how many thresholds the row exceeds.
    n = 12
    feature = [0] * n + [-1] * (n + 1)
    threshold = [float(i) for i in range(n)] + [0.0] * (n + 1)
    leaves = [n + i for i in range(n + 1)]  # a leaf's children are itself
    left = [n + i for i in range(n)] + leaves
    right = [i + 1 for i in range(n - 1)] + [2 * n] + leaves
    value = [0.0] * n + [float(i) for i in range(n)] + [float(n)]
    trees = TreeEnsemble.from_json(
        {
            "feature": feature,
            "threshold": threshold,
            "left": left,
            "right": right,
            "value": value,
            "roots": [0],
            "depth": n,
        }
    )
    assert trees.codes is None
    rows = np.array([[-1.0], [0.5], [5.5], [100.0]])
    assert trees.predict(rows).tolist() == [0.0, 1.0, 6.0, 12.0]


def model_json(feature: str = "cue_identifier") -> dict:
    target = {"kind": "trees", "features": [feature], "trees": stump(0, 0.0, 0.0, 1.0)}
    return {"format": 1, "version": "test", "files": target, "symbols": target}


def test_the_learned_ranking_orders_by_the_model_and_keeps_the_evidence() -> None:
    # A model that only values an identifier match ranks the named function first, even
    # though the issue template has the best lexical hit.
    ranker = LearnedRanking(RankerModel.from_json(model_json()), RankingV1())
    ranking = ranker.rank(request())
    assert ranking.symbols[0].symbol == RETRY
    assert ranking.symbols[0].score == 1.0
    assert any(e.signal == "identifier" for e in ranking.symbols[0].evidence)
    assert ranking.files[0].relative_path == "src/client/uploads.py"
    assert ranker.name == "learned:test"


def test_a_documentation_question_lists_sections_and_documentation_files_first() -> None:
    # The model values only an identifier match, so it ranks the code first; a question that
    # asks what the documentation says still gets the sections, and their files, above it.
    upgrading = ref("docs/manual.md > Manual > Upgrading", "docs/manual.md", kind="section")
    code = ref("check_upgrade", "src/shop/upgrade.py")
    ranker = LearnedRanking(RankerModel.from_json(model_json()), RankingV1())

    def ranked(question: str) -> Ranking:
        return ranker.rank(
            RankingInput(
                cues=extract_cues(question),
                chunks=[chunk(1, 0.03, code, lexical=1), chunk(2, 0.03, upgrading, lexical=2)],
                named_symbols=[code],
                max_files=10,
                max_symbols=10,
            )
        )

    asked = ranked("What does the documentation say about check_upgrade?")
    assert [s.symbol for s in asked.symbols] == [upgrading, code]
    assert [f.relative_path for f in asked.files] == ["docs/manual.md", "src/shop/upgrade.py"]
    assert asked.symbols[1].score > asked.symbols[0].score  # the model's scores are kept

    where = ranked("Where is check_upgrade implemented?")
    assert [s.symbol for s in where.symbols] == [code, upgrading]
    assert where.files[0].relative_path == "src/shop/upgrade.py"


def test_the_file_models_verdict_fills_each_symbols_columns() -> None:
    names = SYMBOL_FEATURES
    rows = [[0.0] * len(names) for _ in range(3)]
    # Files b, a, c by score; the third symbol's file was not scored at all.
    filled = with_file_scores(rows, ["a", "c", "d"], ["a", "b", "c"], [0.5, 2.0, -1.0])
    columns = [dict(zip(names, row, strict=True)) for row in filled.tolist()]
    assert [c["file_model_rank_recip"] for c in columns] == pytest.approx([1 / 2, 1 / 3, 0.0])
    assert [c["file_model_margin"] for c in columns] == pytest.approx([-1.5, -3.0, -10.0])
    assert rows[0] == [0.0] * len(names)  # the rows given are left as they were
    far = with_file_scores(rows[:1], ["b"], ["a", "b"], [25.0, 0.0])
    assert dict(zip(names, far[0], strict=True))["file_model_margin"] == -10.0  # capped
    assert with_file_scores([], [], ["a"], [1.0]).shape == (0, len(names))
    # candidate_features leaves them for the file model to fill.
    features = candidate_features(request(), RankingV1())
    for row in features.symbol_rows:
        by_name = features_by_name(SYMBOL_FEATURES, row)
        assert by_name["file_model_rank_recip"] == by_name["file_model_margin"] == 0.0


def test_the_symbol_model_reads_the_file_models_verdict() -> None:
    # A file model that values only a file's share of the commits puts transport.py first
    # (16 of 16), and a symbol model that values only the top file then ranks transport.py's
    # method above the function the question names.
    files = {
        "kind": "trees",
        "features": ["history_commits_ratio"],
        "trees": stump(0, 0.75, 0.0, 1.0),
    }
    symbols = {
        "kind": "trees",
        "features": ["file_model_rank_recip"],
        "trees": stump(0, 0.99, 0.0, 1.0),
    }
    model = RankerModel.from_json({"format": 1, "version": "t", "files": files, "symbols": symbols})
    ranking = LearnedRanking(model, RankingV1()).rank(request())
    assert ranking.files[0].relative_path == HELPER.relative_path
    assert ranking.symbols[0].symbol == HELPER
    assert ranking.symbols[0].score == 1.0
    assert all(s.score == 0.0 for s in ranking.symbols[1:])


def test_a_model_with_features_the_gateway_lacks_is_refused() -> None:
    with pytest.raises(RankerModelError, match="does not compute: no_such_feature"):
        RankerModel.from_json(model_json("no_such_feature"))
    with pytest.raises(RankerModelError, match="format"):
        RankerModel.from_json({**model_json(), "format": 2})


def test_the_shipped_model_loads_and_names_its_training_data() -> None:
    model = RankerModel.load()
    assert "train.jsonl" in model.metadata["trained_on"].split(" + ")
    assert len(model.metadata["training_data_sha256"]) == 64
    assert model.metadata["instances"] >= 100
    assert model.version.startswith("trees-")
    assert LearnedRanking(model, RankingV1()).uses_history == model.reads("history_")
    assert not LearnedRanking(RankerModel.from_json(model_json()), RankingV1()).uses_history


@pytest.mark.parametrize(
    ("kind", "column"),
    [
        ("function", "kind_function"),
        ("method", "kind_method"),
        ("constructor", "kind_method"),
        ("class", "kind_class"),
        ("interface", "kind_class"),
        ("struct", "kind_class"),
        ("enum", "kind_class"),
        ("trait", "kind_class"),
        ("module", "kind_module"),
        ("namespace", "kind_module"),
    ],
)
def test_each_kind_sets_the_kind_column_of_its_kin(kind: str, column: str) -> None:
    symbol = ref("Store", "src/store.rs", kind=kind)
    features = candidate_features(
        RankingInput(cues=extract_cues("store"), chunks=[chunk(1, 0.05, symbol)]), RankingV1()
    )
    row = features_by_name(SYMBOL_FEATURES, features.symbol_rows[0])
    assert [name for name in SYMBOL_FEATURES if name.startswith("kind_") and row[name]] == [column]
