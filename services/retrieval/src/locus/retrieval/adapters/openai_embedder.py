"""Embedder on an OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``), e.g.
vLLM serving the same model on a GPU. Vectors are L2-normalised here, whatever the server does.
Each call is a traced client span carrying the trace context and the request ID.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np
from numpy.typing import NDArray
from opentelemetry.trace import TracerProvider

from locus.retrieval.domain.errors import EmbedderUnavailable
from locus.telemetry.http import traced_http_client


class OpenAICompatibleEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        dimension: int,
        *,
        api_key: str = "",
        batch_size: int = 64,
        timeout_seconds: float = 60.0,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._model = model
        self._dimension = dimension
        self._api_key = api_key
        self._batch_size = batch_size
        self._timeout = timeout_seconds
        self._tracer_provider = tracer_provider
        self._client: httpx.AsyncClient | None = None

    @property
    def model_id(self) -> str:
        # Another server may truncate or pool differently: never share cached vectors with the
        # local embedders, even for the same model name.
        return f"openai-compatible:{self._model}"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def open(self) -> None:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        self._client = traced_http_client(
            self._tracer_provider, base_url=self._base_url, headers=headers, timeout=self._timeout
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        result = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            result[start : start + len(batch)] = await self._embed_batch(batch)
        return result

    async def _embed_batch(self, texts: list[str]) -> NDArray[np.float32]:
        if self._client is None:
            raise RuntimeError("OpenAICompatibleEmbedder is not open")
        url = f"{self._base_url}/embeddings"
        try:
            response = await self._client.post(
                "/embeddings", json={"model": self._model, "input": texts}
            )
        except httpx.HTTPError as error:
            raise EmbedderUnavailable(f"embeddings endpoint {url} unreachable: {error}") from error
        if response.status_code != 200:
            raise EmbedderUnavailable(
                f"embeddings endpoint {url} answered {response.status_code}: {response.text[:300]}"
            )
        try:
            data = sorted(response.json()["data"], key=lambda item: int(item["index"]))
            vectors = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as error:
            raise EmbedderUnavailable(
                f"embeddings endpoint {url} answered something that is not an OpenAI "
                f"embeddings response: {error}"
            ) from error
        if vectors.shape != (len(texts), self._dimension):
            raise EmbedderUnavailable(
                f"embeddings endpoint {url} returned vectors of shape {vectors.shape} for "
                f"{len(texts)} texts; expected dimension {self._dimension} "
                "(set LOCUS_RETRIEVAL_EMBEDDINGS_DIMENSION)"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        normalised: NDArray[np.float32] = vectors / np.maximum(norms, 1e-12)
        return normalised
