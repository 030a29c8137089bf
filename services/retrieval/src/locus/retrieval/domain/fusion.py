"""Reciprocal rank fusion: score(d) = Σ over lists of 1 / (k + rank(d)), ranks 1-based.

RRF needs no score calibration between BM25 and cosine similarity, only ranks; ``k`` damps the
weight of the top ranks (60 in the original paper, Cormack et al. 2009).
"""

from __future__ import annotations

from collections.abc import Sequence

from locus.retrieval.domain.model import FusedHit, ScoredChunk

DEFAULT_RRF_K = 60


def rrf_scores(rankings: Sequence[Sequence[str]], k: int = DEFAULT_RRF_K) -> dict[str, float]:
    """Fused score of every id in any ranking (best first). An id repeated in one ranking
    counts at its best rank only."""
    if k < 1:
        raise ValueError("rrf k must be at least 1")
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


def fuse(
    lexical: Sequence[ScoredChunk],
    vector: Sequence[ScoredChunk],
    *,
    k: int = DEFAULT_RRF_K,
    limit: int,
) -> list[FusedHit]:
    """Fuse the two ranked lists; ties go to the better single rank, then to the chunk id, so
    equal inputs always give the same order."""
    lexical_ids = [hit.chunk.chunk_id for hit in lexical]
    vector_ids = [hit.chunk.chunk_id for hit in vector]
    scores = rrf_scores([lexical_ids, vector_ids], k)
    lexical_at = _first_positions(lexical)
    vector_at = _first_positions(vector)

    def best_rank(chunk_id: str) -> int:
        ranks = [r for r in (lexical_at.get(chunk_id, 0), vector_at.get(chunk_id, 0)) if r]
        return min(ranks)

    ordered = sorted(scores, key=lambda cid: (-scores[cid], best_rank(cid), cid))[:limit]
    hits: list[FusedHit] = []
    for chunk_id in ordered:
        lexical_rank = lexical_at.get(chunk_id, 0)
        vector_rank = vector_at.get(chunk_id, 0)
        source = lexical[lexical_rank - 1] if lexical_rank else vector[vector_rank - 1]
        hits.append(
            FusedHit(
                chunk=source.chunk,
                score=scores[chunk_id],
                lexical_rank=lexical_rank,
                vector_rank=vector_rank,
                lexical_score=lexical[lexical_rank - 1].score if lexical_rank else 0.0,
                vector_score=vector[vector_rank - 1].score if vector_rank else 0.0,
            )
        )
    return hits


def _first_positions(hits: Sequence[ScoredChunk]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for rank, hit in enumerate(hits, start=1):
        positions.setdefault(hit.chunk.chunk_id, rank)
    return positions
