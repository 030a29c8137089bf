"""The evidence a ranked candidate carries from retrieval: which list found it, at what rank."""

from __future__ import annotations

from locus.gateway.domain.ranking_types import RRF_K, ChunkMatch, Evidence


def retrieval_evidence(normalized: float, chunk: ChunkMatch) -> list[Evidence]:
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
