"""NATS consumers of impact: files.parsed (durable consumer ``impact``) → the graph projection,
the parts of one fetch applied together (``MessageBatcher``; those of a deleted project are
dropped); project.deleted (durable consumer ``impact-projects``) → the project's rows deleted,
its tombstone kept."""

from __future__ import annotations

from locus.impact.adapters.messages import UnknownRelationKind, parsed_file_from_event
from locus.impact.domain import InvalidParsedFile, check_parsed_file
from locus.impact.projection import GraphProjection
from locus.messaging import Delivery, EventBus, MalformedEvent, MessageBatcher
from locus.v1 import events_pb2


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
            await projection.report_failure(event, str(error))
            raise MalformedEvent(str(error)) from error
        except Exception as error:
            if delivery.is_last_attempt:
                await projection.report_failure(event, f"{type(error).__name__}: {error}")
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
