"""Service layer of impact's graph projection: apply the files.parsed parts of a batch to the
store in one transaction and report the files whose parts are all in through the
``IndexReporter`` port (on the bus: index.updated, stage "impact", one message per job); delete
a project's rows on project.deleted, keeping a tombstone: a late files.parsed of a deleted
project is dropped (logged, not reported). A stale event (older snapshot than the one held) is
reported skipped, so the older job still completes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from locus.impact.adapters.store import ImpactStore
from locus.impact.domain import (
    FileReport,
    IndexReporter,
    ParsedFile,
    ReportStatus,
    UpdateDecision,
)

log = logging.getLogger(__name__)


class GraphProjection:
    def __init__(
        self,
        store: ImpactStore,
        reporter: IndexReporter,
        *,
        on_change: Callable[[str], None] = lambda project_id: None,
        on_delete: Callable[[str], None] = lambda project_id: None,
    ) -> None:
        self._store = store
        self._reporter = reporter
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
        reports: list[FileReport] = []
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
            status: ReportStatus
            if outcome.decision is UpdateDecision.STALE:
                log.info(
                    "ignoring files.parsed of %s at snapshot %d: snapshot %d is held",
                    event.file_id,
                    event.snapshot_seq,
                    outcome.held_snapshot_seq,
                )
                status = "skipped"
                error = f"superseded by snapshot {outcome.held_snapshot_seq}"
            elif outcome.complete:
                status = "skipped" if event.unsupported_language else "indexed"
                error = ""
            else:
                continue
            if event.job_id:  # not part of a scan job: nobody waits for a report
                reports.append(
                    FileReport(
                        event.job_id,
                        event.project_id,
                        event.snapshot_id,
                        event.file_id,
                        event.sha256,
                        event.change,
                        status,
                        error,
                    )
                )
        if reports:
            await self._reporter.report(reports)

    async def report_failure(self, failed: FileReport) -> None:
        """Report a file that will never be applied (``failed.status`` is "failed")."""
        if failed.job_id and failed.file_id:
            await self._reporter.report([failed])
