"""Reranker on a rerank endpoint: ``POST {base_url}/rerank`` with ``{model, query, documents,
top_n}``, answered by ``{results: [{index, relevance_score}]}`` — the API vLLM serves for
cross-encoder models (``vllm serve BAAI/bge-reranker-v2-m3``, ``/v1/rerank``), and Jina, Cohere
(v2) and llama.cpp's ``llama-server --reranking`` too. The best ``top_n`` symbols of a ranking
are sent as documents (path, qualified name, the code that matched); the trace context and the
request id travel in the HTTP headers, like on every other hop. The API key goes only into the
Authorization header; the endpoint's URL appears in spans and errors without its user-info."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.trace import TracerProvider

from locus.gateway.domain.errors import RerankerUnavailable
from locus.gateway.domain.ranking_types import Ranking
from locus.gateway.domain.reranking import apply_relevance, rerank_window
from locus.telemetry import redact
from locus.telemetry.http import traced_http_client


class HttpReranker:
    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        top_n: int = 30,
        max_document_chars: int = 2000,
        timeout_seconds: float = 10.0,
        weight: float = 0.25,
        tracer: trace.Tracer | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._url = f"{self.base_url}/rerank"
        self._shown_url = redact(self._url)  # what spans and error messages may say
        self._model = model
        self._api_key = api_key
        self.window = top_n  # the first symbols sent, as documents
        self._max_chars = max_document_chars
        self._timeout = timeout_seconds
        self._weight = weight  # of the endpoint's relevance beside the ranking's own score
        self._tracer = tracer or trace.get_tracer("locus.gateway")
        self._tracer_provider = tracer_provider
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        self._client = traced_http_client(
            self._tracer_provider, headers=headers, timeout=self._timeout
        )

    async def stop(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def rerank(self, question: str, ranking: Ranking, texts: Mapping[str, str]) -> Ranking:
        if self._client is None:
            raise RuntimeError("HttpReranker is not started")
        window = rerank_window(ranking, texts, self.window, self._max_chars)
        if len(window.symbols) < 2:
            return ranking
        body = {
            "model": self._model,
            "query": question,
            "documents": list(window.documents),
            "top_n": len(window.documents),
        }
        with self._tracer.start_as_current_span(
            "gateway.rerank", kind=trace.SpanKind.CLIENT
        ) as span:
            span.set_attribute("server.address", redact(self.base_url))
            span.set_attribute("locus.rerank.documents", len(window.documents))
            try:
                response = await self._client.post(self._url, json=body)
            except httpx.HTTPError as error:
                raise RerankerUnavailable(
                    f"rerank endpoint {self._shown_url} unreachable: "
                    f"{type(error).__name__}: {redact(str(error))}"
                ) from error
            if response.status_code != 200:
                raise RerankerUnavailable(
                    f"rerank endpoint {self._shown_url} answered HTTP {response.status_code}: "
                    f"{redact(response.text[:300])}"
                )
            relevance = _relevance(self._shown_url, response, len(window.documents))
        return apply_relevance(
            ranking, window, relevance, f"reranked by {self._model}", weight=self._weight
        )


def _relevance(url: str, response: httpx.Response, documents: int) -> dict[int, float]:
    try:
        payload: Any = response.json()
        results = payload["results"]
        relevance = {int(r["index"]): float(r["relevance_score"]) for r in results}
    except (KeyError, TypeError, ValueError) as error:
        raise RerankerUnavailable(
            f"rerank endpoint {url} answered something that is not a rerank response "
            f"({{results: [{{index, relevance_score}}]}}): {error}"
        ) from error
    outside = sorted(i for i in relevance if not 0 <= i < documents)
    if outside:
        raise RerankerUnavailable(
            f"rerank endpoint {url} scored documents {outside[:5]} of {documents} sent"
        )
    return relevance
