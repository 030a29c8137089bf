"""NATS side of retrieval: the files.parsed consumer, the vectors lane (vectors.requested.*,
most valuable first), the project.deleted consumer, the vectors.requested and index.updated
publishers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Sequence

from locus.codepaths import VALUE_CLASSES
from locus.messaging import (
    Delivery,
    EventBus,
    LaneItem,
    MalformedEvent,
    MessageBatcher,
    PriorityLanes,
    index_updated_message_id,
)
from locus.retrieval.adapters.proto_mapping import (
    InvalidFilesParsed,
    index_updated,
    parsed_part,
    vector_work,
    vectors_requested,
)
from locus.retrieval.domain.model import (
    STAGE_SEARCHABLE,
    FileChange,
    FileReport,
    ParsedPart,
    ReportStatus,
    VectorWork,
)
from locus.retrieval.foreground import ForegroundActivity
from locus.retrieval.indexing import Indexer
from locus.retrieval.vectors_lane import VectorsLane
from locus.v1 import common_pb2, events_pb2

log = logging.getLogger(__name__)

CONSUMER = "retrieval"
PROJECTS_CONSUMER = f"{CONSUMER}-projects"
PROGRESS_EVERY_SECONDS = 20.0


class BusIndexReporter:
    """IndexReporter on the bus: one index.updated per job and stage for a batch of reports,
    with an id derived from its files and versions (a redelivered batch is deduplicated)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def report(self, reports: Sequence[FileReport]) -> None:
        for event in index_updated(reports):
            await self._bus.publish(
                self._bus.subjects.index_updated, event, message_id=index_updated_message_id(event)
            )


class BusVectorWorkQueue:
    """VectorWorkQueue on JetStream: one vectors.requested.<value class> per file part, with
    id ``vectors.requested:<file>:<sha256>:<seq>:<part>``."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def enqueue(self, works: Sequence[VectorWork]) -> None:
        publishes = [
            self._bus.publish(
                self._bus.subjects.vectors_requested(work.value_class),
                vectors_requested(work),
                message_id=(
                    f"vectors.requested:{work.part.file_id}:{work.part.sha256}:"
                    f"{work.part.snapshot_seq}:{work.part.part_index}"
                ),
            )
            for work in works
        ]
        # JetStream acks each publish; waiting for them together costs one round trip.
        await asyncio.gather(*publishes)


def register_vectors_lane(
    bus: EventBus, lane: VectorsLane, reporter: BusIndexReporter, *, batch_size: int
) -> PriorityLanes[events_pb2.VectorsRequested]:
    """The vectors lane: durable consumers ``retrieval-vectors-<class>``, source first (one
    consumer per class, so any number of replicas share the work)."""

    async def on_vectors_requested(items: list[LaneItem[events_pb2.VectorsRequested]]) -> None:
        works = []
        for item in items:
            try:
                works.append(vector_work(item.event))
            except InvalidFilesParsed as error:
                item.reject(str(error))
                await _report_failure(
                    reporter, item.event.part, f"malformed vectors.requested: {error}", "vectors"
                )
        try:
            await lane.embed(works)
        except Exception as error:
            if len(items) == 1 and items[0].delivery.is_last_attempt:
                await _report_failure(
                    reporter, items[0].event.part, f"{type(error).__name__}: {error}", "vectors"
                )
            raise

    return bus.subscribe_lanes(
        [bus.subjects.vectors_requested(value) for value in VALUE_CLASSES],
        events_pb2.VectorsRequested,
        f"{CONSUMER}-vectors",
        on_vectors_requested,
        batch_size=batch_size,
    )


def register_event_handlers(
    bus: EventBus,
    batcher: MessageBatcher[ParsedPart],
    reporter: BusIndexReporter,
    *,
    fetch_batch: int,
    activity: ForegroundActivity | None = None,
) -> None:
    activity = activity or ForegroundActivity(quiet_seconds=0)

    async def on_files_parsed(event: events_pb2.FilesParsed, delivery: Delivery) -> None:
        try:
            part = parsed_part(event)
        except InvalidFilesParsed as error:
            await _report_failure(reporter, event, f"malformed files.parsed: {error}")
            raise MalformedEvent(str(error)) from error
        try:
            with activity.working():  # the vectors lane waits while this has files in hand
                await _with_progress(batcher.submit(part), delivery)
        except Exception as error:
            if delivery.is_last_attempt:
                await _report_failure(reporter, event, f"{type(error).__name__}: {error}")
            raise

    bus.subscribe(
        bus.subjects.files_parsed,
        events_pb2.FilesParsed,
        CONSUMER,
        on_files_parsed,
        fetch_batch=fetch_batch,
    )


def register_project_deletion(bus: EventBus, indexer: Indexer) -> None:
    """project.deleted (durable consumer ``retrieval-projects``): the project's index entries,
    vectors and file versions are deleted and its tombstone recorded (its later files.parsed
    and vectors.requested are dropped and acknowledged)."""

    async def on_project_deleted(event: events_pb2.ProjectDeleted, delivery: Delivery) -> None:
        if not event.project_id:
            raise MalformedEvent("project.deleted needs project_id")
        await indexer.delete_project(event.project_id)

    bus.subscribe(
        bus.subjects.project_deleted,
        events_pb2.ProjectDeleted,
        PROJECTS_CONSUMER,
        on_project_deleted,
    )


async def _with_progress(work: Awaitable[None], delivery: Delivery) -> None:
    """Await ``work`` while telling JetStream every few seconds that it is still in progress,
    so a long batch is not redelivered to another replica."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=PROGRESS_EVERY_SECONDS)
        if done:
            task.result()
            return
        with contextlib.suppress(Exception):
            await delivery.progress()


async def _report_failure(
    reporter: BusIndexReporter,
    event: events_pb2.FilesParsed,
    error: str,
    stage: str = STAGE_SEARCHABLE,
) -> None:
    """Tell ingestion the file failed, so its scan job can still complete."""
    if not event.job_id or not event.file.file_id:
        return
    change = {
        common_pb2.CHANGE_TYPE_ADDED: FileChange.ADDED,
        common_pb2.CHANGE_TYPE_DELETED: FileChange.DELETED,
    }.get(event.file.change_type, FileChange.MODIFIED)
    try:
        await reporter.report(
            [
                FileReport(
                    job_id=event.job_id,
                    project_id=event.project_id,
                    snapshot_id=event.snapshot_id,
                    file_id=event.file.file_id,
                    sha256=event.file.sha256,
                    change=change,
                    status=ReportStatus.FAILED,
                    error=error,
                    stage=stage,
                )
            ]
        )
    except Exception:
        log.exception("could not report the failure of %s", event.file.file_id)
