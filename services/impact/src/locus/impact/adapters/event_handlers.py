"""NATS consumers of impact: files.parsed (durable consumer ``impact``) → the graph projection,
the parts of one fetch applied together (``MessageBatcher``; those of a deleted project are
dropped); project.deleted (durable consumer ``impact-projects``) → the project's rows deleted,
its tombstone kept. ``BusIndexReporter`` publishes the projection's reports as index.updated."""

from __future__ import annotations

from collections.abc import Sequence

from locus.impact.adapters.messages import (
    CHANGE_TYPES,
    UnknownRelationKind,
    change_kind,
    parsed_file_from_event,
)
from locus.impact.domain import FileReport, InvalidParsedFile, check_parsed_file
from locus.impact.projection import GraphProjection
from locus.messaging import (
    Delivery,
    EventBus,
    MalformedEvent,
    MessageBatcher,
    index_updated_message_id,
)
from locus.v1 import events_pb2

STAGE = "impact"
MAX_REPORTED_ERROR_CHARS = 2000
_STATUSES = {
    "indexed": events_pb2.INDEX_STATUS_INDEXED,
    "skipped": events_pb2.INDEX_STATUS_SKIPPED,
    "failed": events_pb2.INDEX_STATUS_FAILED,
}


class BusIndexReporter:
    """IndexReporter on the bus: one index.updated (stage ``impact``) per job of the reports,
    with an id derived from its files, versions and statuses (``index_updated_message_id``, as
    retrieval's)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def report(self, reports: Sequence[FileReport]) -> None:
        by_job: dict[str, list[FileReport]] = {}
        for report in reports:
            by_job.setdefault(report.job_id, []).append(report)
        for job_id, files in by_job.items():
            indexed = [
                events_pb2.IndexedFile(
                    file_id=report.file_id,
                    sha256=report.sha256,
                    change_type=CHANGE_TYPES[report.change],
                    status=_STATUSES[report.status],
                    error=report.error,
                )
                for report in files
            ]
            event = events_pb2.IndexUpdated(
                job_id=job_id,
                project_id=files[0].project_id,
                snapshot_id=files[0].snapshot_id,
                stage=STAGE,
                files=indexed,
            )
            await self._bus.publish(
                self._bus.subjects.index_updated, event, message_id=index_updated_message_id(event)
            )


def failed_file(event: events_pb2.FilesParsed, error: str) -> FileReport:
    """The report of a files.parsed that will never be applied, from what the event says."""
    return FileReport(
        job_id=event.job_id,
        project_id=event.project_id,
        snapshot_id=event.snapshot_id,
        file_id=event.file.file_id,
        sha256=event.file.sha256,
        change=change_kind(event.file.change_type),
        status="failed",
        error=error[:MAX_REPORTED_ERROR_CHARS],
    )


def register_event_handlers(
    bus: EventBus,
    projection: GraphProjection,
    *,
    durable: str,
    fetch_batch: int = 16,
    linger_seconds: float = 0.05,
    stream_linger_seconds: float | None = None,
) -> None:
    batcher = MessageBatcher(
        projection.apply_batch,
        max_items=fetch_batch,
        linger_seconds=linger_seconds,
        stream_linger_seconds=stream_linger_seconds,
    )

    async def on_files_parsed(event: events_pb2.FilesParsed, delivery: Delivery) -> None:
        try:
            parsed = parsed_file_from_event(event)
            check_parsed_file(parsed)
            await batcher.submit(parsed)
        except (InvalidParsedFile, UnknownRelationKind) as error:
            await projection.report_failure(failed_file(event, str(error)))
            raise MalformedEvent(str(error)) from error
        except Exception as error:
            if delivery.is_last_attempt:
                await projection.report_failure(
                    failed_file(event, f"{type(error).__name__}: {error}")
                )
            raise

    async def on_project_deleted(event: events_pb2.ProjectDeleted, delivery: Delivery) -> None:
        if not event.project_id:
            raise MalformedEvent("project.deleted needs project_id")
        await projection.delete_project(event.project_id)

    bus.subscribe(
        bus.subjects.project_deleted,
        events_pb2.ProjectDeleted,
        f"{durable}-projects",
        on_project_deleted,
    )
    bus.subscribe(
        bus.subjects.files_parsed,
        events_pb2.FilesParsed,
        durable,
        on_files_parsed,
        fetch_batch=fetch_batch,
    )
