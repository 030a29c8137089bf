"""Service layer of indexing: files.parsed parts in, both indexes and index.updated out.

Parts that arrive together (one fetch of the subscription) are gathered by ``PartBatcher`` and
indexed as one batch: one embedding call for all their chunks, one write to each index. Each
batch:
1. decides per part, from the stored file versions, whether it starts a new version of its
   file (clear the old chunks), adds to the current one, was applied already, or is stale;
2. embeds the chunks whose content hash is not in the embedding cache (model id + sha256);
3. writes both indexes (remove the files' old chunks, then upsert by chunk id), then the file
   versions, then reports every file whose parts are all applied (index.updated).
Every step is safe to repeat: a redelivered part finds its version applied and is reported
again (deduplicated by message id) without touching the indexes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from locus.retrieval.adapters.store import RetrievalStore
from locus.retrieval.domain.file_versions import (
    FileState,
    PartDecision,
    PartVersion,
    apply_part,
    decide,
)
from locus.retrieval.domain.model import (
    EmbeddedChunk,
    FileReport,
    IndexedChunk,
    ParsedPart,
    ReportStatus,
)
from locus.retrieval.domain.ports import (
    BM25Index,
    Embedder,
    IndexReporter,
    ProjectCatalog,
    VectorIndex,
)

log = logging.getLogger(__name__)


@dataclass
class IndexingStats:
    """Counters since start; also logged per batch."""

    batches: int = 0
    parts: int = 0
    files_reported: int = 0
    files_deleted: int = 0
    parts_stale: int = 0
    parts_duplicate: int = 0
    chunks_written: int = 0
    vectors_embedded: int = 0
    vectors_from_cache: int = 0


@dataclass
class _FilePlan:
    """The writes one batch makes for one file."""

    clear: bool = False
    chunks: dict[str, IndexedChunk] = field(default_factory=dict)


class Indexer:
    def __init__(
        self,
        store: RetrievalStore,
        bm25: BM25Index,
        vectors: VectorIndex,
        embedder: Embedder,
        projects: ProjectCatalog,
        reporter: IndexReporter,
    ) -> None:
        self._store = store
        self._bm25 = bm25
        self._vectors = vectors
        self._embedder = embedder
        self._projects = projects
        self._reporter = reporter
        self.stats = IndexingStats()

    async def index(self, parts: Sequence[ParsedPart]) -> None:
        """Apply ``parts`` (in order) to both indexes and report completed files."""
        started = time.perf_counter()
        states: dict[str, FileState | None] = dict(
            await self._store.file_states([p.file_id for p in parts])
        )
        plans: dict[str, _FilePlan] = {}
        reports: list[FileReport] = []
        changed: dict[str, FileState] = {}
        subsystems = {
            project: await self._projects.subsystem_of(project)
            for project in dict.fromkeys(p.project_id for p in parts)
        }
        for part in parts:
            state = states.get(part.file_id)
            version = PartVersion(
                file_id=part.file_id,
                project_id=part.project_id,
                snapshot_seq=part.snapshot_seq,
                sha256=part.sha256,
                deleted=part.deleted,
                part_index=part.part_index,
                part_count=part.part_count,
            )
            decision = decide(state, version)
            if decision is PartDecision.STALE:
                self.stats.parts_stale += 1
                log.info(
                    "ignoring stale part of %s (seq %d < indexed seq %d)",
                    part.file_id,
                    part.snapshot_seq,
                    state.snapshot_seq if state else -1,
                )
                reports.append(_report(part, ReportStatus.SKIPPED, "a newer version is indexed"))
                continue
            plan = plans.setdefault(part.file_id, _FilePlan())
            if decision is PartDecision.NEW_VERSION:
                plan.clear = True
                plan.chunks.clear()  # an older version earlier in this batch is superseded
            if decision in (PartDecision.NEW_VERSION, PartDecision.SAME_VERSION):
                subsystem = subsystems[part.project_id]
                for draft in () if part.deleted else part.chunks:
                    plan.chunks[draft.chunk_id] = part.placed(draft, subsystem)
            else:
                self.stats.parts_duplicate += 1
            added = 0 if part.deleted else len(part.chunks)
            new_state = apply_part(state, version, decision, added)
            states[part.file_id] = new_state
            if new_state is not None:
                changed[part.file_id] = new_state
                if new_state.complete:
                    reports.append(_report(part, ReportStatus.INDEXED))
        remove_files = [file_id for file_id, plan in plans.items() if plan.clear]
        chunks = [chunk for plan in plans.values() for chunk in plan.chunks.values()]

        async def embed_and_write_vectors() -> tuple[int, int]:
            embedded, cache_hits, fresh = await self._embed(chunks)
            await self._vectors.write(remove_files, embedded)
            return cache_hits, fresh

        # BM25 analysis and writing overlap the embedding (onnxruntime leaves the GIL).
        (cache_hits, fresh), _ = await asyncio.gather(
            embed_and_write_vectors(), self._bm25.write(remove_files, chunks)
        )
        snapshots = {p.snapshot_id: (p.project_id, p.snapshot_seq) for p in parts if p.snapshot_id}
        await self._store.save(list(changed.values()), snapshots)
        unique_reports = _unique(reports)
        for report in unique_reports:
            await self._reporter.report(report)
        self.stats.batches += 1
        self.stats.parts += len(parts)
        self.stats.chunks_written += len(chunks)
        self.stats.files_reported += len(unique_reports)
        self.stats.files_deleted += sum(1 for p in parts if p.deleted)
        log.info(
            "indexed %d parts of %d files in %.2fs: %d chunks written, %d files cleared, "
            "embedding cache %d hits / %d embedded (totals %d / %d)",
            len(parts),
            len({p.file_id for p in parts}),
            time.perf_counter() - started,
            len(chunks),
            len(remove_files),
            cache_hits,
            fresh,
            self.stats.vectors_from_cache,
            self.stats.vectors_embedded,
        )

    async def _embed(self, chunks: Sequence[IndexedChunk]) -> tuple[list[EmbeddedChunk], int, int]:
        """Vectors for ``chunks``: from the cache where the model saw the content before,
        else embedded (each distinct content once) and cached. Also returns how many distinct
        contents came from the cache and how many were embedded."""
        if not chunks:
            return [], 0, 0
        model = self._embedder.model_id
        hashes = list(dict.fromkeys(c.content_sha256 for c in chunks))
        vectors: dict[str, NDArray[np.float32]] = await self._store.cached_vectors(model, hashes)
        missing = [sha for sha in hashes if sha not in vectors]
        if missing:
            text_of = {c.content_sha256: c.text for c in chunks}
            fresh = await self._embedder.embed([text_of[sha] for sha in missing])
            new_vectors = dict(zip(missing, fresh, strict=True))
            await self._store.save_vectors(model, new_vectors)
            vectors.update(new_vectors)
        hits = len(hashes) - len(missing)
        self.stats.vectors_from_cache += hits
        self.stats.vectors_embedded += len(missing)
        embedded = [EmbeddedChunk(c, vectors[c.content_sha256].tolist()) for c in chunks]
        return embedded, hits, len(missing)


def _report(part: ParsedPart, status: ReportStatus, error: str = "") -> FileReport:
    return FileReport(
        job_id=part.job_id,
        project_id=part.project_id,
        snapshot_id=part.snapshot_id,
        file_id=part.file_id,
        sha256=part.sha256,
        change=part.change,
        status=status,
        error=error,
    )


def _unique(reports: Sequence[FileReport]) -> list[FileReport]:
    return list(dict.fromkeys(reports))


@dataclass
class _Pending:
    part: ParsedPart
    done: asyncio.Future[None]


class PartBatcher:
    """Gathers parts submitted at about the same time (the messages of one fetch, handled
    concurrently) and indexes them as one batch. A failed batch is retried part by part, so
    one bad part fails alone instead of failing the batch."""

    def __init__(
        self, indexer: Indexer, *, max_parts: int = 32, linger_seconds: float = 0.05
    ) -> None:
        self._indexer = indexer
        self._max_parts = max_parts
        self._linger = linger_seconds
        self._pending: list[_Pending] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()  # one batch at a time: the indexes have one writer
        self._running: set[asyncio.Task[None]] = set()  # the loop keeps only weak references

    async def submit(self, part: ParsedPart) -> None:
        """Returns once ``part`` is indexed; raises what indexing it raised."""
        loop = asyncio.get_running_loop()
        pending = _Pending(part, loop.create_future())
        self._pending.append(pending)
        if len(self._pending) >= self._max_parts:
            self._flush_now()
        elif self._timer is None:
            self._timer = loop.call_later(self._linger, self._flush_now)
        await pending.done

    def _flush_now(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        if batch:
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run(self, batch: list[_Pending]) -> None:
        async with self._lock:
            try:
                await self._indexer.index([p.part for p in batch])
            except Exception as error:
                if len(batch) == 1:
                    _settle(batch[0], error)
                    return
                log.warning("batch of %d parts failed (%s); retrying one by one", len(batch), error)
                for pending in batch:
                    try:
                        await self._indexer.index([pending.part])
                    except Exception as single_error:
                        _settle(pending, single_error)
                    else:
                        _settle(pending, None)
                return
            for pending in batch:
                _settle(pending, None)


def _settle(pending: _Pending, error: BaseException | None) -> None:
    if pending.done.done():
        return
    if error is None:
        pending.done.set_result(None)
    else:
        pending.done.set_exception(error)
