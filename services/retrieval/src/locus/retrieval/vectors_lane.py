"""Service layer of the vectors lane: searchable chunks in, vectors and index.updated (stage
"vectors") out, in the background and off the critical path of a scan.

Each batch of ``VectorWork`` (many file parts, most valuable first):
1. keeps the parts whose file version is still the indexed one (a newer version supersedes
   them: reported SKIPPED);
2. takes vectors from the embedding cache (model id + chunk content sha256) and embeds each
   distinct missing content once, in sub-batches that are cached as soon as they are made, so
   a crash loses at most the sub-batch in hand;
3. under the vector-write lock shared with the searchable path, checks the versions again,
   upserts the vectors by chunk id and records the parts done; a file whose parts are all done
   is reported embedded.
Every step is safe to repeat: a redelivered part finds its vectors in the cache. The parts of
a deleted project (tombstoned) are dropped first: nothing embedded, written or reported.

Searchable files and searches come first: before each embedder call (a slice of texts), the lane
waits while this process has files.parsed in hand or a Search running, or had one within a
quiet period (``ForegroundActivity``), so neither a scan nor a query shares its cores with
embedding; it never waits longer than a bound per call, so vectors keep moving under
changes or queries that never stop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from locus.retrieval.adapters.store import RetrievalStore
from locus.retrieval.domain.file_versions import FileState
from locus.retrieval.domain.model import (
    STAGE_EMBEDDED,
    EmbeddedChunk,
    FileReport,
    IndexedChunk,
    ReportStatus,
    VectorWork,
)
from locus.retrieval.domain.ports import Embedder, IndexReporter, VectorIndex
from locus.retrieval.foreground import ForegroundActivity
from locus.telemetry.metrics import CACHE_LOOKUPS, EMBEDDED_CHUNKS

log = logging.getLogger(__name__)


@dataclass
class VectorsLaneStats:
    """Counters since start (distinct chunk contents per batch)."""

    batches: int = 0
    parts: int = 0
    parts_stale: int = 0
    files_embedded: int = 0
    chunks_written: int = 0
    vectors_embedded: int = 0
    vectors_from_cache: int = 0
    embed_seconds: float = 0.0
    yielded_seconds: float = 0.0  # waiting for foreground work to go quiet


def is_current(state: FileState | None, work: VectorWork) -> bool:
    """Whether ``work`` belongs to the file version the indexes hold now."""
    part = work.part
    return (
        state is not None
        and not state.deleted
        and state.sha256 == part.sha256
        and state.snapshot_seq == part.snapshot_seq
    )


class VectorsLane:
    def __init__(
        self,
        store: RetrievalStore,
        vectors: VectorIndex,
        embedder: Embedder,
        reporter: IndexReporter,
        vector_writes: asyncio.Lock,
        *,
        cache_every: int = 256,
        embed_slice: int = 128,
        activity: ForegroundActivity | None = None,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._embedder = embedder
        self._reporter = reporter
        self._vector_writes = vector_writes  # shared with the searchable path
        self._cache_every = cache_every
        self._embed_slice = embed_slice
        self._activity = activity or ForegroundActivity(quiet_seconds=0)
        self.stats = VectorsLaneStats()

    @property
    def model_id(self) -> str:
        """The model whose vectors the lane writes (the embedding cache's key with a hash)."""
        return self._embedder.model_id

    async def embed(self, works: Sequence[VectorWork]) -> None:
        deleted = await self._store.deleted_projects({w.part.project_id for w in works})
        for work in works:
            if work.part.project_id in deleted:
                log.info(
                    "dropping vectors.requested of deleted project %s (job %s, file %s, part %d)",
                    work.part.project_id,
                    work.part.job_id,
                    work.part.file_id,
                    work.part.part_index,
                )
        if deleted:
            works = [w for w in works if w.part.project_id not in deleted]
            if not works:
                return
        started = time.perf_counter()
        yielded_before = self.stats.yielded_seconds
        embedding_before = self.stats.embed_seconds
        file_ids = [w.part.file_id for w in works]
        states = await self._store.file_states(file_ids)
        current = [w for w in works if is_current(states.get(w.part.file_id), w)]
        reports = [_stale(w) for w in works if w not in current]
        chunks = [chunk for work in current for chunk in work.chunks()]
        vectors, hits, fresh = await self._vectors_for(chunks)
        async with self._vector_writes:
            states = await self._store.file_states(file_ids)
            still = [w for w in current if is_current(states.get(w.part.file_id), w)]
            reports.extend(_stale(w) for w in current if w not in still)
            embedded = [
                EmbeddedChunk(chunk, vectors[chunk.content_sha256].tolist())
                for work in still
                for chunk in work.chunks()
            ]
            await self._vectors.write([], embedded)
            complete = await self._store.record_vector_parts(
                [
                    (w.part.file_id, w.part.sha256, w.part.snapshot_seq, w.part.part_index)
                    for w in still
                ],
                {w.part.file_id: w.part.part_count for w in still},
            )
        done = {w.part.file_id: w for w in still if w.part.file_id in complete}
        reports.extend(_embedded(w) for w in done.values())
        await self._reporter.report(list(dict.fromkeys(reports)))
        self.stats.batches += 1
        self.stats.parts += len(works)
        self.stats.parts_stale += len(works) - len(still)
        self.stats.files_embedded += len(done)
        self.stats.chunks_written += len(embedded)
        yielded = self.stats.yielded_seconds - yielded_before
        log.info(
            "vectors for %d parts (%d stale) in %.2fs: %d chunks written, %d files embedded, "
            "cache %d hits / %d embedded (totals %d / %d); %.2fs yielded to foreground work, "
            "%.2fs embedding",
            len(works),
            len(works) - len(still),
            time.perf_counter() - started - yielded,
            len(embedded),
            len(done),
            hits,
            fresh,
            self.stats.vectors_from_cache,
            self.stats.vectors_embedded,
            yielded,
            self.stats.embed_seconds - embedding_before,
        )

    async def _vectors_for(
        self, chunks: Sequence[IndexedChunk]
    ) -> tuple[dict[str, NDArray[np.float32]], int, int]:
        """Vectors by content hash: from the cache where the model saw the content before,
        else embedded (each distinct content once) and cached sub-batch by sub-batch."""
        if not chunks:
            return {}, 0, 0
        model = self._embedder.model_id
        hashes = list(dict.fromkeys(c.content_sha256 for c in chunks))
        vectors = await self._store.cached_vectors(model, hashes)
        text_of = {c.content_sha256: c.text for c in chunks}
        # Shortest first: the embedder pads each of its batches to its longest text, so texts
        # of like length in one call keep the padding small however small the calls are (calls
        # of 32 unsorted texts halved the lane's rate); small calls let foreground work in
        # between them.
        missing = sorted(
            (sha for sha in hashes if sha not in vectors), key=lambda sha: len(text_of[sha])
        )
        for start in range(0, len(missing), self._cache_every):
            keys = missing[start : start + self._cache_every]
            fresh: list[NDArray[np.float32]] = []
            for first in range(0, len(keys), self._embed_slice):
                self.stats.yielded_seconds += await self._activity.quiet()
                began = time.perf_counter()
                texts = [text_of[sha] for sha in keys[first : first + self._embed_slice]]
                fresh.extend(await self._embedder.embed(texts))
                self.stats.embed_seconds += time.perf_counter() - began
            made = dict(zip(keys, fresh, strict=True))
            await self._store.save_vectors(model, made)
            vectors.update(made)
            self.stats.vectors_embedded += len(keys)
            EMBEDDED_CHUNKS.labels("computed").inc(len(keys))
        hits = len(hashes) - len(missing)
        self.stats.vectors_from_cache += hits
        EMBEDDED_CHUNKS.labels("cache").inc(hits)
        CACHE_LOOKUPS.labels("embeddings", "hit").inc(hits)
        CACHE_LOOKUPS.labels("embeddings", "miss").inc(len(missing))
        return vectors, hits, len(missing)


def _stale(work: VectorWork) -> FileReport:
    return work.part.report(ReportStatus.SKIPPED, "a newer version is indexed", STAGE_EMBEDDED)


def _embedded(work: VectorWork) -> FileReport:
    return work.part.report(ReportStatus.INDEXED, "", STAGE_EMBEDDED)
