"""Composition root of the impact service: the only place that reads settings and builds the
store, the bus, the in-memory graphs, the gRPC server and telemetry."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace.export import SpanExporter

from locus.database import Database
from locus.impact.adapters.event_handlers import BusIndexReporter, register_event_handlers
from locus.impact.adapters.graph_cache import ProjectGraphs
from locus.impact.adapters.grpc_servicer import ImpactServicer
from locus.impact.adapters.store import ImpactStore
from locus.impact.projection import GraphProjection
from locus.impact.settings import ImpactSettings
from locus.messaging import EventBus
from locus.rpc import MeshCredentials, RpcServer, ServiceRuntime, StoreLifecycle
from locus.telemetry import configure_logging, setup_telemetry
from locus.telemetry.metrics import MetricsEndpoint
from locus.v1 import impact_pb2, impact_pb2_grpc


class ImpactRuntime(ServiceRuntime):
    """The service runtime, plus its project graphs for tests and tools."""

    graphs: ProjectGraphs


def build(settings: ImpactSettings, *, exporters: Sequence[SpanExporter] = ()) -> ImpactRuntime:
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    mesh = MeshCredentials.from_settings(settings)
    store = ImpactStore(
        Database(settings.sqlalchemy_url("impact.db")), migrate_on_start=settings.migrate_on_start
    )
    bus = EventBus.from_settings(settings, telemetry)
    graphs = ProjectGraphs(
        store,
        max_projects=settings.max_cached_projects,
        snapshot_dir=settings.data_dir / "graphs" if settings.persist_graphs else None,
        rebuild_delay_seconds=settings.graph_rebuild_delay_seconds,
    )
    register_event_handlers(
        bus,
        GraphProjection(
            store,
            BusIndexReporter(bus),
            on_change=graphs.project_changed,
            on_delete=graphs.forget,
        ),
        durable=settings.consumer_name,
        fetch_batch=settings.fetch_batch,
        linger_seconds=settings.batch_linger_seconds,
        stream_linger_seconds=settings.stream_batch_linger_seconds,
    )
    server = RpcServer(
        settings.grpc_bind,
        telemetry,
        mesh=mesh,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    server.add_service(
        impact_pb2_grpc.add_ImpactServiceServicer_to_server,
        ImpactServicer(graphs),
        impact_pb2.DESCRIPTOR.services_by_name["ImpactService"].full_name,
    )
    runtime = ImpactRuntime(
        settings.service_name,
        server,
        telemetry,
        [StoreLifecycle(store), graphs, bus],
        metrics=MetricsEndpoint.from_settings(settings),
    )
    runtime.graphs = graphs
    return runtime
