"""NATS consumers of ast: ``files.changed`` (durable consumer ``ast``; a batch of a deleted
project is dropped and acknowledged; a dead-lettered batch's files are reported FAILED) and
``project.deleted`` (durable consumer ``ast-projects``: the project's rows deleted, its
tombstone kept)."""

from __future__ import annotations

from locus.ast.indexing import AstIndexer
from locus.messaging import Delivery, EventBus, MalformedEvent
from locus.v1 import events_pb2

AST_CONSUMER = "ast"
PROJECTS_CONSUMER = f"{AST_CONSUMER}-projects"


def malformed_reason(event: events_pb2.FilesChanged) -> str:
    """Why the batch can never be processed, or "" when it can."""
    if not event.job_id or not event.project_id:
        return "files.changed needs job_id and project_id"
    missing = [index for index, changed in enumerate(event.files) if not changed.file_id]
    if missing:
        return f"files.changed has files without file_id (positions {missing[:10]})"
    return ""


def register_event_handlers(bus: EventBus, indexer: AstIndexer) -> None:
    async def on_files_changed(event: events_pb2.FilesChanged, delivery: Delivery) -> None:
        reason = malformed_reason(event)
        if reason:
            raise MalformedEvent(reason)
        await indexer.index_batch(
            event, progress=delivery.progress, final_attempt=delivery.is_last_attempt
        )

    async def on_files_changed_dead_lettered(
        event: events_pb2.FilesChanged | None, reason: str
    ) -> None:
        if event is not None:
            await indexer.report_given_up(event, reason)

    async def on_project_deleted(event: events_pb2.ProjectDeleted, delivery: Delivery) -> None:
        if not event.project_id:
            raise MalformedEvent("project.deleted needs project_id")
        await indexer.delete_project(event)

    bus.subscribe(
        bus.subjects.files_changed,
        events_pb2.FilesChanged,
        AST_CONSUMER,
        on_files_changed,
        on_dead_letter=on_files_changed_dead_lettered,
    )
    bus.subscribe(
        bus.subjects.project_deleted,
        events_pb2.ProjectDeleted,
        PROJECTS_CONSUMER,
        on_project_deleted,
    )
