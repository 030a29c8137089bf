"""NATS side of retrieval: the files.parsed consumer and the index.updated publisher."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable

from locus.messaging import Delivery, EventBus, MalformedEvent
from locus.retrieval.adapters.proto_mapping import InvalidFilesParsed, index_updated, parsed_part
from locus.retrieval.domain.model import FileChange, FileReport, ReportStatus
from locus.retrieval.indexing import PartBatcher
from locus.v1 import common_pb2, events_pb2

log = logging.getLogger(__name__)

CONSUMER = "retrieval"
PROGRESS_EVERY_SECONDS = 20.0


class BusIndexReporter:
    """IndexReporter on the bus: one index.updated per file, with a deterministic id."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def report(self, report: FileReport) -> None:
        await self._bus.publish(
            self._bus.subjects.index_updated,
            index_updated(report),
            message_id=(
                f"index.updated:retrieval:{report.job_id}:{report.file_id}:{report.sha256}"
            ),
        )


def register_event_handlers(
    bus: EventBus, batcher: PartBatcher, reporter: BusIndexReporter, *, fetch_batch: int
) -> None:
    async def on_files_parsed(event: events_pb2.FilesParsed, delivery: Delivery) -> None:
        try:
            part = parsed_part(event)
        except InvalidFilesParsed as error:
            await _report_failure(reporter, event, f"malformed files.parsed: {error}")
            raise MalformedEvent(str(error)) from error
        try:
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
    reporter: BusIndexReporter, event: events_pb2.FilesParsed, error: str
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
            FileReport(
                job_id=event.job_id,
                project_id=event.project_id,
                snapshot_id=event.snapshot_id,
                file_id=event.file.file_id,
                sha256=event.file.sha256,
                change=change,
                status=ReportStatus.FAILED,
                error=error,
            )
        )
    except Exception:
        log.exception("could not report the failure of %s", event.file.file_id)
