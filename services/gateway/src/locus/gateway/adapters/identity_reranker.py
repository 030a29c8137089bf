"""The default Reranker: keeps the ranking as it is. ``HttpReranker`` (a rerank endpoint: vLLM,
Jina, Cohere, llama.cpp) replaces it when LOCUS_GATEWAY_RERANK_URL is set."""

from __future__ import annotations

from collections.abc import Mapping

from locus.gateway.domain.ranking_types import Ranking


class IdentityReranker:
    window = 0  # reads nothing

    async def rerank(self, question: str, ranking: Ranking, texts: Mapping[str, str]) -> Ranking:
        return ranking
