"""Composition root of the ingestion service: the only place that reads settings and builds
stores, the bus, the gRPC server and telemetry."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace.export import SpanExporter

from locus.database import Database
from locus.ingestion.adapters.blob_store import FileBlobStore
from locus.ingestion.adapters.event_handlers import register_event_handlers
from locus.ingestion.adapters.grpc_servicer import IngestionServicer
from locus.ingestion.adapters.store import IngestionStore
from locus.ingestion.scanning import Ingestion
from locus.ingestion.settings import IngestionSettings
from locus.messaging import EventBus, Subjects
from locus.rpc import RpcServer, ServiceRuntime
from locus.telemetry import configure_logging, setup_telemetry
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc


class _StoreComponent:
    def __init__(self, store: IngestionStore) -> None:
        self._store = store

    async def start(self) -> None:
        await self._store.initialize()

    async def stop(self) -> None:
        await self._store.close()


def build(settings: IngestionSettings, *, exporters: Sequence[SpanExporter] = ()) -> ServiceRuntime:
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    store = IngestionStore(Database(settings.sqlalchemy_url("ingestion.db")))
    blobs = FileBlobStore(settings.blob_dir)
    bus = EventBus(
        settings.nats_url,
        telemetry,
        subjects=Subjects(settings.subject_prefix),
        stream_name=settings.stream_name,
        max_deliver=settings.max_deliver,
        ack_wait_seconds=settings.ack_wait_seconds,
        graceful_timeout_seconds=settings.shutdown_grace_seconds,
    )
    ingestion = Ingestion(settings, store, blobs, bus)
    register_event_handlers(bus, ingestion)
    server = RpcServer(settings.grpc_bind, telemetry, grace_seconds=settings.shutdown_grace_seconds)
    server.add_service(
        ingestion_pb2_grpc.add_IngestionServiceServicer_to_server,
        IngestionServicer(ingestion, settings.required_stages),
        ingestion_pb2.DESCRIPTOR.services_by_name["IngestionService"].full_name,
    )
    return ServiceRuntime(settings.service_name, server, telemetry, [_StoreComponent(store), bus])
