"""Service layer of indexing, searchable level: files.parsed parts in, the BM25 index and
index.updated (stage "retrieval") out; their vectors are queued for the vectors lane.

Parts that arrive together (one fetch of the subscription) are gathered by a
``locus.messaging.MessageBatcher`` and indexed as one batch, with one write to each index.
Each batch:
1. decides per part, from the stored file versions, whether it starts a new version of its
   file (clear the old chunks), adds to the current one, was applied already, or is stale;
2. writes the BM25 index (remove the files' old chunks, then upsert by chunk id, and the
   whole-file document of every file whose version is now complete: from this batch's chunks,
   or from the index when earlier parts came in an earlier batch) and removes the old vectors
   of files that changed, so no search ever sees a superseded chunk;
3. saves the file versions, then queues the new chunks for their vectors (``VectorWorkQueue``:
   the vectors lane embeds them in the background, most valuable first);
4. reports every file whose parts are all applied as searchable, in one index.updated per job.
Every step is safe to repeat: a redelivered part finds its version applied, is queued again
(the lane deduplicates by content hash) and reported again, without touching the indexes.
Files with nothing to embed (deleted, no chunks, or a value class the settings exclude) are
reported at the embedded level at once.

A deleted project keeps a tombstone (recorded by ``delete_project``); the parts of a
tombstoned project (late events of a finished scan) are dropped before anything is written,
so neither its BM25 index directory nor its vectors or file versions come back. A batch and
a project deletion never interleave (``_batch_or_deletion``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from locus.codepaths import VALUE_CLASSES, value_class
from locus.retrieval.adapters.store import RetrievalStore
from locus.retrieval.domain.file_versions import (
    FileState,
    PartDecision,
    PartVersion,
    apply_part,
    decide,
)
from locus.retrieval.domain.model import (
    STAGE_EMBEDDED,
    STAGE_SEARCHABLE,
    FileReport,
    IndexedChunk,
    ParsedPart,
    ReportStatus,
    VectorWork,
    WholeFile,
    whole_file,
)
from locus.retrieval.domain.ports import (
    BM25Index,
    IndexReporter,
    ProjectCatalog,
    VectorIndex,
    VectorWorkQueue,
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
    parts_queued: int = 0


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
        projects: ProjectCatalog,
        reporter: IndexReporter,
        queue: VectorWorkQueue,
        vector_writes: asyncio.Lock,
        *,
        embedded_classes: Collection[str] = VALUE_CLASSES,
    ) -> None:
        self._store = store
        self._bm25 = bm25
        self._vectors = vectors
        self._projects = projects
        self._reporter = reporter
        self._queue = queue
        self._vector_writes = vector_writes  # shared with the vectors lane
        self._embedded_classes = frozenset(embedded_classes)
        # A batch checks the tombstones and writes under it, a deletion deletes under it: no
        # batch checks before a deletion and writes after it.
        self._batch_or_deletion = asyncio.Lock()
        self.stats = IndexingStats()

    async def index(self, parts: Sequence[ParsedPart]) -> None:
        """Apply ``parts`` (in order) to the BM25 index, queue their vectors and report the
        files that became searchable; the parts of a deleted project are dropped."""
        async with self._batch_or_deletion:
            deleted = await self._store.deleted_projects({p.project_id for p in parts})
            for part in parts:
                if part.project_id in deleted:
                    log.info(
                        "dropping files.parsed of deleted project %s (job %s, file %s, part %d)",
                        part.project_id,
                        part.job_id,
                        part.file_id,
                        part.part_index,
                    )
            live = [p for p in parts if p.project_id not in deleted]
            if live:
                await self._index(live)

    async def _index(self, parts: Sequence[ParsedPart]) -> None:
        started = time.perf_counter()
        states: dict[str, FileState | None] = dict(
            await self._store.file_states([p.file_id for p in parts])
        )
        # A file with no saved state has no vectors (the lane writes them only for the saved
        # version): a first scan removes none. Its BM25 documents are removed all the same (a
        # crash between the BM25 write and the save leaves some behind).
        indexed_before = {file_id for file_id, state in states.items() if state is not None}
        plans: dict[str, _FilePlan] = {}
        reports: list[FileReport] = []
        works: dict[tuple[str, int], VectorWork] = {}
        changed: dict[str, FileState] = {}
        completed: dict[str, None] = {}  # files a part completed: their whole-file documents
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
                reports.append(part.report(ReportStatus.SKIPPED, "a newer version is indexed"))
                reports.append(
                    part.report(ReportStatus.SKIPPED, "a newer version is indexed", STAGE_EMBEDDED)
                )
                continue
            plan = plans.setdefault(part.file_id, _FilePlan())
            if decision is PartDecision.NEW_VERSION:
                plan.clear = True
                plan.chunks.clear()  # an older version earlier in this batch is superseded
                for key in [k for k in works if k[0] == part.file_id]:
                    del works[key]
            subsystem = subsystems[part.project_id]
            if decision in (PartDecision.NEW_VERSION, PartDecision.SAME_VERSION):
                for draft in () if part.deleted else part.chunks:
                    plan.chunks[draft.chunk_id] = part.placed(draft, subsystem)
            else:
                self.stats.parts_duplicate += 1
            # Queued again on a redelivery too: the first queueing may not have happened.
            value = value_class(part.path)
            if not part.deleted and value in self._embedded_classes:
                works[(part.file_id, part.part_index)] = VectorWork(part, subsystem, value)
            added = 0 if part.deleted else len(part.chunks)
            new_state = apply_part(state, version, decision, added)
            states[part.file_id] = new_state
            if new_state is not None:
                changed[part.file_id] = new_state
                if new_state.complete:
                    completed[part.file_id] = None
                    reports.append(part.report(ReportStatus.INDEXED))
                    if part.deleted or new_state.chunk_count == 0:
                        reports.append(part.report(ReportStatus.INDEXED, "", STAGE_EMBEDDED))
                    elif value not in self._embedded_classes:
                        reports.append(
                            part.report(
                                ReportStatus.SKIPPED,
                                f"vectors of {value} files are not wanted",
                                STAGE_EMBEDDED,
                            )
                        )
        remove_files = [file_id for file_id, plan in plans.items() if plan.clear]
        remove_vectors = [file_id for file_id in remove_files if file_id in indexed_before]
        chunks = [chunk for plan in plans.values() for chunk in plan.chunks.values()]
        project_of = {part.file_id: part.project_id for part in parts}
        documents = await self._whole_files(completed, plans, states, project_of)
        for project_id in dict.fromkeys(project_of.values()):  # each project is its own index
            await self._bm25.write(
                project_id,
                [file_id for file_id in remove_files if project_of[file_id] == project_id],
                [chunk for chunk in chunks if chunk.project_id == project_id],
                [document for document in documents if document.project_id == project_id],
            )
        snapshots = {p.snapshot_id: (p.project_id, p.snapshot_seq) for p in parts if p.snapshot_id}
        # One critical section with the lane: it must never see the old version still current
        # after its vectors were removed (it would write them back).
        async with self._vector_writes:
            if remove_vectors:
                await self._vectors.write(remove_vectors, [])
            await self._store.save(list(changed.values()), snapshots)
        # Queued after the versions are saved, so the lane finds the version it embeds for;
        # a crash in between redelivers the parts, which are then queued as duplicates.
        # A one-part file without chunks was reported embedded above; parts of bigger files
        # are queued even when empty, because the lane counts a file's parts.
        await self._queue.enqueue(
            [w for w in works.values() if w.part.chunks or w.part.part_count > 1]
        )
        unique_reports = _unique(reports)
        await self._reporter.report(unique_reports)
        self.stats.batches += 1
        self.stats.parts += len(parts)
        self.stats.chunks_written += len(chunks)
        self.stats.files_reported += sum(1 for r in unique_reports if r.stage == STAGE_SEARCHABLE)
        self.stats.files_deleted += sum(1 for p in parts if p.deleted)
        self.stats.parts_queued += len(works)
        log.info(
            "indexed %d parts of %d files in %.2fs: %d chunks written, %d files cleared, "
            "%d parts queued for vectors",
            len(parts),
            len({p.file_id for p in parts}),
            time.perf_counter() - started,
            len(chunks),
            len(remove_files),
            len(works),
        )

    async def delete_project(self, project_id: str) -> None:
        """``project.deleted``: remove the project's BM25 chunks and whole-file documents, its
        vectors, file versions and snapshots. Inside the lane's critical section, so the lane
        never writes vectors of the project back (it finds no current version afterwards).
        The project's tombstone is recorded with its file versions, after which every part
        of it is dropped. A repeated deletion finds nothing and succeeds."""
        async with self._batch_or_deletion, self._vector_writes:
            await self._bm25.delete_project(project_id)
            await self._vectors.delete_project(project_id)
            files = await self._store.delete_project(project_id)
        self._projects.forget(project_id)
        log.info("deleted project %s: %d files retracted from both indexes", project_id, files)

    async def _whole_files(
        self,
        completed: Collection[str],
        plans: dict[str, _FilePlan],
        states: dict[str, FileState | None],
        project_of: dict[str, str],
    ) -> list[WholeFile]:
        """The whole-file document of each file this batch completed (a deleted or empty
        version has none)."""
        documents = []
        for file_id in completed:
            plan = plans.get(file_id, _FilePlan())
            state = states.get(file_id)
            if state is None or state.deleted or not state.complete or not state.chunk_count:
                continue
            found = list(plan.chunks.values())
            if not plan.clear and len(found) < state.chunk_count:
                # Earlier parts of this version were indexed by an earlier batch (or this one
                # is a redelivery): the rest of the file is in the index already.
                indexed = await self._bm25.file_chunks(project_of[file_id], file_id)
                merged = {c.chunk_id: c for c in indexed}
                merged.update(plan.chunks)
                found = list(merged.values())
            if found:
                documents.append(whole_file(found))
        return documents


def _unique(reports: Sequence[FileReport]) -> list[FileReport]:
    return list(dict.fromkeys(reports))
