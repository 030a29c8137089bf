"""Service layer of impact's graph projection: apply the files.parsed parts of a batch to the
store in one transaction and report the files whose parts are all in on index.updated (stage
"impact"), one message per job; delete a project's rows on project.deleted, keeping a
tombstone: a late files.parsed of a deleted project is dropped (logged, not reported).

Reports use the message id ``index.updated:impact:<job_id>:<digest of files and versions>``,
so a report repeated after a redelivery is deduplicated by JetStream. A stale event (older
snapshot than the one held) is reported SKIPPED, so the older job still completes.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence

from locus.impact.adapters.store import ImpactStore
from locus.impact.domain import ParsedFile, UpdateDecision
from locus.messaging import EventBus
from locus.v1 import common_pb2, events_pb2

log = logging.getLogger(__name__)

STAGE = "impact"
_CHANGE_VALUES = {
    "added": common_pb2.CHANGE_TYPE_ADDED,
    "modified": common_pb2.CHANGE_TYPE_MODIFIED,
    "deleted": common_pb2.CHANGE_TYPE_DELETED,
    "unspecified": common_pb2.CHANGE_TYPE_UNSPECIFIED,
}


def index_updated_message_id(job_id: str, files: Sequence[events_pb2.IndexedFile]) -> str:
    """Derived from the files, their versions and statuses: a report repeated after a
    redelivery is deduplicated, a different one is not."""
    key = ",".join(sorted(f"{f.file_id}:{f.sha256}:{f.status}" for f in files))
    return f"index.updated:{STAGE}:{job_id}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"


class GraphProjection:
    def __init__(
        self,
        store: ImpactStore,
        bus: EventBus,
        *,
        on_change: Callable[[str], None] = lambda project_id: None,
        on_delete: Callable[[str], None] = lambda project_id: None,
    ) -> None:
        self._store = store
        self._bus = bus
        self._on_change = on_change  # e.g. rebuild the project's cached graph
        self._on_delete = on_delete  # e.g. drop the project's cached graph

    async def delete_project(self, project_id: str) -> None:
        """``project.deleted``: delete the project's graph rows and cached graph, and keep its
        tombstone (a repeated deletion finds nothing and succeeds)."""
        files = await self._store.delete_project(project_id)
        self._on_delete(project_id)
        log.info("deleted project %s: %d files retracted from the graph", project_id, files)

    async def apply(self, event: ParsedFile) -> None:
        await self.apply_batch([event])

    async def apply_batch(self, events: Sequence[ParsedFile]) -> None:
        """Apply ``events`` in one transaction, then report the files they completed (and the
        stale ones, SKIPPED) in one index.updated per job."""
        outcomes = await self._store.apply_batch(events)
        for project_id in dict.fromkeys(
            e.project_id
            for e, o in zip(events, outcomes, strict=True)
            if o.decision is not UpdateDecision.STALE
        ):
            self._on_change(project_id)
        reports: list[tuple[ParsedFile, events_pb2.IndexedFile]] = []
        for event, outcome in zip(events, outcomes, strict=True):
            if outcome.project_deleted:
                log.info(
                    "dropping files.parsed of deleted project %s (job %s, file %s, part %d)",
                    event.project_id,
                    event.job_id,
                    event.file_id,
                    event.part_index,
                )
                continue
            if outcome.decision is UpdateDecision.STALE:
                log.info(
                    "ignoring files.parsed of %s at snapshot %d: snapshot %d is held",
                    event.file_id,
                    event.snapshot_seq,
                    outcome.held_snapshot_seq,
                )
                status = events_pb2.INDEX_STATUS_SKIPPED
                error = f"superseded by snapshot {outcome.held_snapshot_seq}"
            elif outcome.complete:
                status = (
                    events_pb2.INDEX_STATUS_SKIPPED
                    if event.unsupported_language
                    else events_pb2.INDEX_STATUS_INDEXED
                )
                error = ""
            else:
                continue
            reports.append(
                (
                    event,
                    events_pb2.IndexedFile(
                        file_id=event.file_id,
                        sha256=event.sha256,
                        change_type=_CHANGE_VALUES[event.change],
                        status=status,
                        error=error,
                    ),
                )
            )
        by_job: dict[str, list[tuple[ParsedFile, events_pb2.IndexedFile]]] = {}
        for event, file in reports:
            by_job.setdefault(event.job_id, []).append((event, file))
        for job_id, files in by_job.items():
            first = files[0][0]
            await self._report(job_id, first.project_id, first.snapshot_id, [f for _, f in files])

    async def report_failure(self, event: events_pb2.FilesParsed, error: str) -> None:
        """Report a file that will never be applied, when the event says enough to do so."""
        if not event.job_id or not event.file.file_id:
            return
        await self._report(
            event.job_id,
            event.project_id,
            event.snapshot_id,
            [
                events_pb2.IndexedFile(
                    file_id=event.file.file_id,
                    sha256=event.file.sha256,
                    change_type=event.file.change_type,
                    status=events_pb2.INDEX_STATUS_FAILED,
                    error=error[:2000],
                )
            ],
        )

    async def _report(
        self,
        job_id: str,
        project_id: str,
        snapshot_id: str,
        files: Sequence[events_pb2.IndexedFile],
    ) -> None:
        if not job_id:
            return  # not part of a scan job: nobody waits for a report
        await self._bus.publish(
            self._bus.subjects.index_updated,
            events_pb2.IndexUpdated(
                job_id=job_id,
                project_id=project_id,
                snapshot_id=snapshot_id,
                stage=STAGE,
                files=files,
            ),
            message_id=index_updated_message_id(job_id, files),
        )
