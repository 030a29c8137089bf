"""VectorIndex on Qdrant through qdrant-client: a Qdrant server in production
(``LOCUS_RETRIEVAL_QDRANT_URL``), or the client's local mode (``path=``) in tests — a numpy
implementation of the same API, fine for contract tests, too slow for real repositories."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qdrant_client import AsyncQdrantClient, models

from locus.retrieval.adapters.edge_vectors import point_id
from locus.retrieval.domain.errors import IndexIncompatible
from locus.retrieval.domain.model import ChunkFilter, EmbeddedChunk, IndexedChunk, ScoredChunk

UPSERT_BATCH = 256
KEYWORD_FIELDS = ("project_id", "subsystem", "language", "file_id", "symbol_node_id")


class QdrantClientVectorIndex:
    def __init__(
        self,
        collection: str,
        dimension: int,
        *,
        url: str = "",
        api_key: str = "",
        local_path: Path | None = None,
        timeout_seconds: float = 30.0,
    ) -> None:
        if bool(url) == (local_path is not None):
            raise ValueError("give exactly one of url (a Qdrant server) or local_path")
        self._collection = collection
        self._dimension = dimension
        self._url = url
        self._api_key = api_key or None
        self._local_path = local_path
        self._timeout = timeout_seconds
        self._client: AsyncQdrantClient | None = None

    async def open(self) -> None:
        if self._local_path is not None:
            self._local_path.mkdir(parents=True, exist_ok=True)
            client = AsyncQdrantClient(path=str(self._local_path))
        else:
            client = AsyncQdrantClient(
                url=self._url, api_key=self._api_key, timeout=int(self._timeout)
            )
        self._client = client
        if await client.collection_exists(self._collection):
            info = await client.get_collection(self._collection)
            vectors = info.config.params.vectors
            size = vectors.size if isinstance(vectors, models.VectorParams) else None
            if size != self._dimension:
                raise IndexIncompatible(
                    f"Qdrant collection {self._collection!r} holds {size}-dimensional vectors, "
                    f"the embedder makes {self._dimension}: use another collection or rescan"
                )
            return
        await client.create_collection(
            self._collection,
            vectors_config=models.VectorParams(
                size=self._dimension, distance=models.Distance.COSINE
            ),
        )
        if self._local_path is None:  # local mode ignores payload indexes (and warns)
            for name in KEYWORD_FIELDS:
                await client.create_payload_index(
                    self._collection, name, models.PayloadSchemaType.KEYWORD
                )
            await client.create_payload_index(
                self._collection,
                "path",
                models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, prefix=True),
            )
            await client.create_payload_index(
                self._collection, "snapshot_seq", models.PayloadSchemaType.INTEGER
            )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _require(self) -> AsyncQdrantClient:
        if self._client is None:
            raise RuntimeError("QdrantClientVectorIndex is not open")
        return self._client

    async def write(self, remove_files: Sequence[str], chunks: Sequence[EmbeddedChunk]) -> None:
        client = self._require()
        if remove_files:
            await client.delete(
                self._collection,
                points_selector=models.FilterSelector(
                    filter=models.Filter(
                        must=[
                            models.FieldCondition(
                                key="file_id", match=models.MatchAny(any=list(remove_files))
                            )
                        ]
                    )
                ),
                wait=True,
            )
        points = [
            models.PointStruct(
                id=point_id(item.chunk.chunk_id),
                vector=[float(x) for x in item.vector],
                payload=item.chunk.to_payload(),
            )
            for item in chunks
        ]
        for start in range(0, len(points), UPSERT_BATCH):
            await client.upsert(
                self._collection, points=points[start : start + UPSERT_BATCH], wait=True
            )

    async def delete_project(self, project_id: str) -> None:
        await self._require().delete(
            self._collection,
            points_selector=models.FilterSelector(
                filter=client_filter(ChunkFilter(project_id=project_id))
            ),
            wait=True,
        )

    async def search(
        self, vector: Sequence[float], filters: ChunkFilter, limit: int
    ) -> list[ScoredChunk]:
        if limit <= 0:
            return []
        response = await self._require().query_points(
            self._collection,
            query=[float(x) for x in vector],
            query_filter=client_filter(filters),
            limit=limit,
            with_payload=True,
        )
        return [
            ScoredChunk(IndexedChunk.from_payload(point.payload or {}), float(point.score))
            for point in response.points
        ]

    async def count(self, project_id: str) -> int:
        result = await self._require().count(
            self._collection,
            count_filter=client_filter(ChunkFilter(project_id=project_id)),
            exact=True,
        )
        return int(result.count)


def client_filter(filters: ChunkFilter) -> models.Filter:
    must: list[Any] = [
        models.FieldCondition(key="project_id", match=models.MatchValue(value=filters.project_id))
    ]
    if filters.subsystem:
        must.append(
            models.FieldCondition(key="subsystem", match=models.MatchValue(value=filters.subsystem))
        )
    if filters.languages:
        languages = models.MatchAny(any=list(filters.languages))
        must.append(models.FieldCondition(key="language", match=languages))
    if filters.path_prefix:
        must.append(
            models.FieldCondition(key="path", match=models.MatchPrefix(prefix=filters.path_prefix))
        )
    if filters.max_snapshot_seq is not None:
        must.append(
            models.FieldCondition(
                key="snapshot_seq", range=models.Range(lte=float(filters.max_snapshot_seq))
            )
        )
    if filters.symbol_node_ids:
        symbols = models.MatchAny(any=list(filters.symbol_node_ids))
        must.append(models.FieldCondition(key="symbol_node_id", match=symbols))
    return models.Filter(must=must)
