"""Composition root of the ingestion service: the only place that reads settings and builds
stores, the bus, the gRPC server and telemetry."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace.export import SpanExporter

from locus.database import Database
from locus.ingestion.adapters.blob_store import FileBlobStore
from locus.ingestion.adapters.chm_extractor import ChmExtractor
from locus.ingestion.adapters.event_handlers import register_event_handlers
from locus.ingestion.adapters.git_remote import GitRemotes
from locus.ingestion.adapters.grpc_servicer import IngestionServicer
from locus.ingestion.adapters.registry_store import RegistryStore
from locus.ingestion.adapters.store import IngestionStore
from locus.ingestion.domain.git_sources import SCHEMES
from locus.ingestion.file_reading import FileReading
from locus.ingestion.git_sources import GitPolling, GitSources
from locus.ingestion.history_reading import HistoryWarmup, ProjectHistories
from locus.ingestion.knowledge_documents import KnowledgeDocuments
from locus.ingestion.registry import Registry
from locus.ingestion.scanning import Ingestion
from locus.ingestion.settings import IngestionSettings
from locus.messaging import EventBus
from locus.rpc import MeshCredentials, RpcServer, ServiceRuntime, StoreLifecycle
from locus.telemetry import configure_logging, setup_telemetry
from locus.telemetry.metrics import MetricsEndpoint
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc


def build(settings: IngestionSettings, *, exporters: Sequence[SpanExporter] = ()) -> ServiceRuntime:
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    mesh = MeshCredentials.from_settings(settings)
    database = Database(settings.sqlalchemy_url("ingestion.db"))
    store = IngestionStore(database, migrate_on_start=settings.migrate_on_start)
    registry = Registry(RegistryStore(database))
    blobs = FileBlobStore(settings.blob_dir)
    bus = EventBus.from_settings(settings, telemetry)
    remotes = GitRemotes(
        settings.git_mirror_dir,
        timeout=settings.git_timeout_seconds,
        protocols=[*SCHEMES, "http"] if settings.git_allow_http else SCHEMES,
        ssh_known_hosts=settings.ssh_known_hosts,
        history_commits=settings.history_max_commits,
    )
    git_sources = GitSources(settings, remotes, blobs.exists)
    # A question names its project as ingestion resolves it (id or name, the same errors).
    histories = ProjectHistories(
        settings, store, git_sources, lambda project_ref: ingestion.get_project(project_ref)
    )
    ingestion = Ingestion(settings, store, blobs, bus, git_sources, histories)
    documents = KnowledgeDocuments(
        settings,
        ingestion,
        store,
        blobs,
        ChmExtractor(
            settings.seven_zip_binary,
            max_extracted_bytes=settings.chm_max_extracted_bytes,
            max_files=settings.chm_max_files,
            timeout_seconds=settings.chm_timeout_seconds,
        ),
    )
    polling = GitPolling(
        ingestion.polled_sources,
        ingestion.poll_source,
        tick_seconds=min(settings.min_poll_seconds, 5.0),
    )
    register_event_handlers(bus, ingestion)
    server = RpcServer(
        settings.grpc_bind,
        telemetry,
        mesh=mesh,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    server.add_service(
        ingestion_pb2_grpc.add_IngestionServiceServicer_to_server,
        IngestionServicer(
            ingestion,
            settings.required_stages,
            settings.embedding_stages,
            documents=documents,
            registry=registry,
            contents=FileReading(blobs, reply_bytes=settings.contents_reply_bytes),
            histories=histories,
        ),
        ingestion_pb2.DESCRIPTOR.services_by_name["IngestionService"].full_name,
    )
    # Progress checks start once the bus is connected and stop (with a last check) before it.
    return ServiceRuntime(
        settings.service_name,
        server,
        telemetry,
        [StoreLifecycle(store), bus, ingestion.progress_checks, HistoryWarmup(histories), polling],
        metrics=MetricsEndpoint.from_settings(settings),
    )
