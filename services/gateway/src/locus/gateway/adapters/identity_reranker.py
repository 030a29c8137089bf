"""The default Reranker: keeps the ranking as it is (a cross-encoder or LLM reranker can replace
it in ``build(reranker=...)`` without touching the ranking)."""

from __future__ import annotations

from locus.gateway.domain.ranking import Ranking


class IdentityReranker:
    async def rerank(self, question: str, ranking: Ranking) -> Ranking:
        return ranking
