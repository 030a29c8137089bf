"""Reciprocal rank fusion: the arithmetic and the ordering rules."""

from __future__ import annotations

import pytest

from locus.retrieval.domain.fusion import fuse, rrf_scores
from locus.retrieval.domain.model import IndexedChunk, ScoredChunk

pytestmark = pytest.mark.unit


def scored(chunk_id: str, score: float) -> ScoredChunk:
    chunk = IndexedChunk(
        chunk_id=chunk_id,
        project_id="p",
        snapshot_id="s",
        snapshot_seq=1,
        file_id="f",
        path="a.py",
        language="python",
        subsystem="",
        start_line=1,
        end_line=2,
        node_id="",
        kind="function",
        symbol_node_id="",
        symbol_qualified_name="",
        text=chunk_id,
        content_sha256="0" * 64,
        ordinal=0,
    )
    return ScoredChunk(chunk, score)


def test_rrf_scores_sum_reciprocal_ranks() -> None:
    scores = rrf_scores([["a", "b", "c"], ["b", "d"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["c"] == pytest.approx(1 / 63)
    assert scores["d"] == pytest.approx(1 / 62)


def test_rrf_counts_a_repeated_id_once_per_list() -> None:
    assert rrf_scores([["a", "a", "b"]], k=1) == {"a": pytest.approx(1 / 2), "b": 1 / 4}


def test_rrf_rejects_k_below_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        rrf_scores([["a"]], k=0)


def test_smaller_k_favours_top_ranks() -> None:
    # "a" is first in one list only; "b" is second in both.
    lists = [["a", "b"], ["c", "b"]]
    assert max(rrf_scores(lists, k=1).items(), key=lambda kv: kv[1])[0] == "b"
    low_k = rrf_scores([["a", "x", "y", "b"], ["c", "z", "w", "b"]], k=1)
    high_k = rrf_scores([["a", "x", "y", "b"], ["c", "z", "w", "b"]], k=1000)
    assert low_k["a"] > low_k["b"]
    assert high_k["b"] > high_k["a"]


def test_fuse_keeps_ranks_and_raw_scores() -> None:
    lexical = [scored("a", 12.0), scored("b", 7.5)]
    vector = [scored("b", 0.91), scored("c", 0.80)]
    hits = fuse(lexical, vector, k=60, limit=10)
    assert [h.chunk.chunk_id for h in hits] == ["b", "a", "c"]
    b, a, c = hits
    assert (b.lexical_rank, b.vector_rank) == (2, 1)
    assert (b.lexical_score, b.vector_score) == (7.5, 0.91)
    assert b.score == pytest.approx(1 / 62 + 1 / 61)
    assert (a.lexical_rank, a.vector_rank, a.vector_score) == (1, 0, 0.0)
    assert (c.lexical_rank, c.vector_rank, c.lexical_score) == (0, 2, 0.0)


def test_fuse_breaks_ties_by_best_rank_then_id() -> None:
    hits = fuse([scored("z", 1), scored("m", 1)], [scored("a", 1), scored("y", 1)], k=60, limit=4)
    # z and a are both rank 1 in one list (equal scores): the id decides; then m and y.
    assert [h.chunk.chunk_id for h in hits] == ["a", "z", "m", "y"]


def test_fuse_single_list_and_limit() -> None:
    hits = fuse([scored("a", 3), scored("b", 2), scored("c", 1)], [], k=60, limit=2)
    assert [h.chunk.chunk_id for h in hits] == ["a", "b"]
    assert all(h.vector_rank == 0 for h in hits)
    assert fuse([], [], k=60, limit=5) == []
