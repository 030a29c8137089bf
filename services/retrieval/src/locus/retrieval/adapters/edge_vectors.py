"""VectorIndex on qdrant-edge (the Qdrant engine in-process, on disk).

The shard is synchronous and allows one opener per path: every call runs in a worker thread,
writes are serialised by a lock. Segments are optimised (HNSW, payload indexes) once enough
points were written, or when writes have paused for a while — never after every upsert.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qdrant_edge import (
    CountRequest,
    Distance,
    EdgeConfig,
    EdgeShard,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    KeywordIndexParams,
    MatchAny,
    MatchPrefix,
    MatchValue,
    PayloadSchemaType,
    Point,
    Query,
    QueryRequest,
    RangeFloat,
    UpdateOperation,
)

from locus.retrieval.domain.errors import IndexIncompatible
from locus.retrieval.domain.model import ChunkFilter, EmbeddedChunk, IndexedChunk, ScoredChunk

log = logging.getLogger(__name__)

POINT_NAMESPACE = uuid.UUID("6f1b6c1e-4f8e-5b7a-9a51-6c6f63757301")
KEYWORD_FIELDS = ("project_id", "subsystem", "language", "file_id", "symbol_node_id")
UPSERT_BATCH = 512


def point_id(chunk_id: str) -> str:
    """Qdrant ids are integers or UUIDs: a UUIDv5 of the chunk id, stable everywhere."""
    return str(uuid.uuid5(POINT_NAMESPACE, chunk_id))


class EdgeVectorIndex:
    def __init__(
        self,
        directory: Path,
        dimension: int,
        *,
        optimize_every_points: int = 20_000,
        optimize_when_idle_seconds: float = 30.0,
    ) -> None:
        self._directory = directory
        self._dimension = dimension
        self._optimize_every = optimize_every_points
        self._idle_seconds = optimize_when_idle_seconds
        self._shard: Any = None
        self._lock = threading.Lock()
        self._unoptimized = 0
        self._idle_task: asyncio.Task[None] | None = None

    def _config(self) -> EdgeConfig:
        return EdgeConfig(vectors=EdgeVectorParams(size=self._dimension, distance=Distance.Cosine))

    async def open(self) -> None:
        await asyncio.to_thread(self._open)

    def _open(self) -> None:
        with self._lock:
            if self._directory.exists() and any(self._directory.iterdir()):
                try:
                    self._shard = EdgeShard.load(str(self._directory), self._config())
                except Exception as error:
                    if "WouldBlock" in str(error):
                        raise RuntimeError(
                            f"the vector index in {self._directory} is open in another process "
                            "(qdrant-edge allows one opener per path)"
                        ) from error
                    raise IndexIncompatible(
                        f"cannot open the vector index in {self._directory} for {self._dimension}"
                        f"-dimensional vectors ({error}); delete the directory and rescan, or "
                        "configure the embedder it was built with"
                    ) from error
                return
            self._directory.mkdir(parents=True, exist_ok=True)
            shard = EdgeShard.create(str(self._directory), self._config())
            for name in KEYWORD_FIELDS:
                shard.update(UpdateOperation.create_field_index(name, PayloadSchemaType.Keyword))
            path_index = KeywordIndexParams(prefix=True)  # serves MatchPrefix (path_prefix)
            shard.update(UpdateOperation.create_field_index("path", path_index))
            shard.update(
                UpdateOperation.create_field_index("snapshot_seq", PayloadSchemaType.Integer)
            )
            self._shard = shard

    async def close(self) -> None:
        if self._idle_task is not None:
            self._idle_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._idle_task
            self._idle_task = None
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._lock:
            if self._shard is None:
                return
            if self._unoptimized:
                self._optimize_locked()
            self._shard.flush()
            self._shard.close()
            self._shard = None

    def _require(self) -> Any:
        if self._shard is None:
            raise RuntimeError("EdgeVectorIndex is not open")
        return self._shard

    async def write(self, remove_files: Sequence[str], chunks: Sequence[EmbeddedChunk]) -> None:
        if not remove_files and not chunks:
            return
        optimize_now = await asyncio.to_thread(self._write, list(remove_files), list(chunks))
        if optimize_now:
            await asyncio.to_thread(self.optimize)
        elif self._unoptimized:
            self._schedule_idle_optimize()

    def _write(self, remove_files: list[str], chunks: list[EmbeddedChunk]) -> bool:
        points = [
            Point(point_id(item.chunk.chunk_id), list(item.vector), item.chunk.to_payload())
            for item in chunks
        ]
        with self._lock:
            shard = self._require()
            if remove_files:
                shard.update(
                    UpdateOperation.delete_points_by_filter(
                        Filter(must=[FieldCondition("file_id", match=MatchAny(remove_files))])
                    )
                )
            for start in range(0, len(points), UPSERT_BATCH):
                shard.update(UpdateOperation.upsert_points(points[start : start + UPSERT_BATCH]))
            # No flush here: updates go through the shard's write-ahead log first.
            self._unoptimized += len(points) + len(remove_files)
            return self._unoptimized >= self._optimize_every

    async def delete_project(self, project_id: str) -> None:
        await asyncio.to_thread(self._delete_project, project_id)

    def _delete_project(self, project_id: str) -> None:
        with self._lock:
            self._require().update(
                UpdateOperation.delete_points_by_filter(
                    Filter(must=[FieldCondition("project_id", match=MatchValue(project_id))])
                )
            )
            self._unoptimized += 1

    def optimize(self) -> None:
        with self._lock:
            if self._shard is not None:
                self._optimize_locked()

    def _optimize_locked(self) -> None:
        started = time.perf_counter()
        changed = self._shard.optimize()
        log.info(
            "vector index optimised in %.1fs (%d writes since the last time, changed=%s)",
            time.perf_counter() - started,
            self._unoptimized,
            changed,
        )
        self._unoptimized = 0

    def _schedule_idle_optimize(self) -> None:
        if self._idle_task is not None:
            self._idle_task.cancel()
        self._idle_task = asyncio.get_running_loop().create_task(self._optimize_when_idle())

    async def _optimize_when_idle(self) -> None:
        await asyncio.sleep(self._idle_seconds)
        await asyncio.to_thread(self.optimize)

    async def search(
        self, vector: Sequence[float], filters: ChunkFilter, limit: int
    ) -> list[ScoredChunk]:
        if limit <= 0:
            return []
        return await asyncio.to_thread(self._search, list(vector), filters, limit)

    def _search(self, vector: list[float], filters: ChunkFilter, limit: int) -> list[ScoredChunk]:
        points = self._require().query(
            QueryRequest(
                limit=limit,
                query=Query.Nearest(vector),
                filter=edge_filter(filters),
                with_payload=True,
            )
        )
        return [
            ScoredChunk(IndexedChunk.from_payload(point.payload or {}), float(point.score))
            for point in points
        ]

    async def count(self, project_id: str) -> int:
        return await asyncio.to_thread(self._count, project_id)

    def _count(self, project_id: str) -> int:
        request = CountRequest(
            exact=True,
            filter=Filter(must=[FieldCondition("project_id", match=MatchValue(project_id))]),
        )
        return int(self._require().count(request))


def edge_filter(filters: ChunkFilter) -> Filter:
    must: list[Any] = [FieldCondition("project_id", match=MatchValue(filters.project_id))]
    if filters.subsystem:
        must.append(FieldCondition("subsystem", match=MatchValue(filters.subsystem)))
    if filters.languages:
        must.append(FieldCondition("language", match=MatchAny(list(filters.languages))))
    if filters.path_prefix:
        must.append(FieldCondition("path", match=MatchPrefix(filters.path_prefix)))
    if filters.max_snapshot_seq is not None:
        must.append(
            FieldCondition("snapshot_seq", range=RangeFloat(lte=float(filters.max_snapshot_seq)))
        )
    if filters.symbol_node_ids:
        must.append(FieldCondition("symbol_node_id", match=MatchAny(list(filters.symbol_node_ids))))
    return Filter(must=must)
