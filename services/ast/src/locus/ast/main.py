"""Composition root of the ast service: the only place that reads settings and builds the
store, the ingestion channel, the bus, the gRPC server and telemetry."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace.export import SpanExporter

from locus.ast.adapters.event_handlers import register_event_handlers
from locus.ast.adapters.grpc_servicer import AstServicer
from locus.ast.adapters.ingestion_client import IngestionContentClient
from locus.ast.adapters.parser_pool import ParserPool
from locus.ast.adapters.store import AstStore
from locus.ast.indexing import AstIndexer
from locus.ast.settings import AstSettings
from locus.database import Database
from locus.messaging import EventBus
from locus.rpc import MeshCredentials, RpcServer, ServiceRuntime, StoreLifecycle, make_channel
from locus.telemetry import configure_logging, setup_telemetry
from locus.telemetry.metrics import MetricsEndpoint
from locus.v1 import ast_pb2, ast_pb2_grpc


def build(settings: AstSettings, *, exporters: Sequence[SpanExporter] = ()) -> ServiceRuntime:
    """Health stays NOT_SERVING until the store is initialized and the bus connected."""
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    mesh = MeshCredentials.from_settings(settings)
    store = AstStore(
        Database(settings.sqlalchemy_url("ast.db")), migrate_on_start=settings.migrate_on_start
    )
    content = IngestionContentClient(
        make_channel(
            settings.peers.ingestion_addr,
            telemetry,
            default_timeout=settings.rpc_timeout_seconds,
            mesh=mesh,
        )
    )
    bus = EventBus.from_settings(settings, telemetry)
    parser = ParserPool(settings.parse_processes)
    indexer = AstIndexer(settings, store, content, bus, telemetry.tracer("locus.ast"), parser)
    register_event_handlers(bus, indexer)
    server = RpcServer(
        settings.grpc_bind,
        telemetry,
        mesh=mesh,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    server.add_service(
        ast_pb2_grpc.add_AstServiceServicer_to_server,
        AstServicer(store),
        ast_pb2.DESCRIPTOR.services_by_name["AstService"].full_name,
    )
    # Started in this order, stopped in reverse: consumers stop before the channel and store.
    return ServiceRuntime(
        settings.service_name,
        server,
        telemetry,
        [StoreLifecycle(store), content, parser, bus],
        metrics=MetricsEndpoint.from_settings(settings),
    )
