"""NATS consumers of ingestion: scan.requested (walk a source) and index.updated (progress)."""

from __future__ import annotations

from locus.ingestion.domain.errors import InvalidRequest
from locus.ingestion.scanning import Ingestion
from locus.messaging import Delivery, EventBus, MalformedEvent
from locus.v1 import events_pb2

SCAN_CONSUMER = "ingestion-scans"
PROGRESS_CONSUMER = "ingestion-progress"


def register_event_handlers(bus: EventBus, ingestion: Ingestion) -> None:
    async def on_scan_requested(event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        if not event.job_id or not event.project_id:
            raise MalformedEvent("scan.requested needs job_id and project_id")
        try:
            await ingestion.run_scan(event)
        except InvalidRequest as error:
            raise MalformedEvent(str(error)) from error

    async def on_index_updated(event: events_pb2.IndexUpdated, delivery: Delivery) -> None:
        try:
            await ingestion.record_index_update(event)
        except InvalidRequest as error:
            raise MalformedEvent(str(error)) from error

    async def on_scan_dead_lettered(event: events_pb2.ScanRequested | None, reason: str) -> None:
        if event is not None and event.job_id:
            await ingestion.fail_scan(event.job_id, reason)

    bus.subscribe(
        bus.subjects.scan_requested,
        events_pb2.ScanRequested,
        SCAN_CONSUMER,
        on_scan_requested,
        on_dead_letter=on_scan_dead_lettered,
    )
    bus.subscribe(
        bus.subjects.index_updated,
        events_pb2.IndexUpdated,
        PROGRESS_CONSUMER,
        on_index_updated,
        fetch_batch=32,
    )
