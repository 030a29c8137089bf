"""Which chunks go into the context bundle of an answer, in which order, with which citation id
(C1, C2, ...) and why: the best chunk of each located symbol first, then further chunks of the
located files. A scoped answer merges the choices of each project by score."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from locus.gateway.domain.ranking_types import Evidence, Ranking, SymbolRef

MAX_WHY_CHARS = 400


@dataclass(frozen=True)
class ContextChoice:
    citation_id: str
    chunk_id: str
    symbol: SymbolRef | None
    score: float
    why: str


def select_context(
    ranking: Ranking, max_chunks: int, has_text: Callable[[str], bool]
) -> list[ContextChoice]:
    """Up to ``max_chunks`` distinct chunks that have text, best first."""
    chosen: list[ContextChoice] = []
    seen: set[str] = set()
    symbol_of_chunk: dict[str, SymbolRef] = {}
    for ranked in ranking.symbols:
        for chunk_id in ranked.chunk_ids:
            symbol_of_chunk.setdefault(chunk_id, ranked.symbol)

    def take(chunk_id: str, symbol: SymbolRef | None, score: float, why: str) -> None:
        seen.add(chunk_id)
        chosen.append(ContextChoice(f"C{len(chosen) + 1}", chunk_id, symbol, score, why))

    for ranked in ranking.symbols:
        if len(chosen) >= max_chunks:
            return chosen
        for chunk_id in ranked.chunk_ids:
            if chunk_id not in seen and has_text(chunk_id):
                take(chunk_id, ranked.symbol, ranked.score, explain(ranked.evidence))
                break
    for file in ranking.files:
        for chunk_id in file.chunk_ids:
            if len(chosen) >= max_chunks:
                return chosen
            if chunk_id not in seen and has_text(chunk_id):
                reasons = [e for e in file.evidence if not e.chunk_id or e.chunk_id == chunk_id]
                take(chunk_id, symbol_of_chunk.get(chunk_id), file.score, explain(reasons))
    return chosen


def explain(evidence: Iterable[Evidence], limit: int = 3) -> str:
    """The strongest reasons, as one line: "identifier: `x` is its name; bm25: lines ..."."""
    parts = [f"{e.signal}: {e.detail}" for e in list(evidence)[:limit]]
    return "; ".join(parts)[:MAX_WHY_CHARS]


def merge_contexts(
    per_project: list[list[ContextChoice]], max_chunks: int
) -> list[tuple[int, ContextChoice]]:
    """The context of a scoped answer: each project's choices (in their own order) merged by
    score, best first (ties: the earlier project), at most ``max_chunks``, as (index of the
    project, choice) with the citation ids renumbered C1, C2, ... across the projects."""
    merged = heapq.merge(
        *(
            [(choice.score, order, choice) for choice in choices]
            for order, choices in enumerate(per_project)
        ),
        key=lambda item: (-item[0], item[1]),
    )
    return [
        (order, replace(choice, citation_id=f"C{number}"))
        for number, (_, order, choice) in enumerate(itertools.islice(merged, max_chunks), start=1)
    ]
