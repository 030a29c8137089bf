"""Composition root of the gateway: the only place that reads settings and builds the request
store, the API keys and token verifier, the bus and audit trail, the peer clients, the ranking,
the gRPC server and telemetry."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace.export import SpanExporter

from locus.database import Database
from locus.gateway.access_control import AccessControl, BootstrapAdminKey
from locus.gateway.adapters.audit_events import BusAuditTrail
from locus.gateway.adapters.grpc_servicer import GatewayServicer
from locus.gateway.adapters.http_reranker import HttpReranker
from locus.gateway.adapters.identity_reranker import IdentityReranker
from locus.gateway.adapters.oidc_tokens import OidcTokenVerifier
from locus.gateway.adapters.peer_clients import Peer, PeerClients
from locus.gateway.adapters.project_directory import IngestionProjectDirectory
from locus.gateway.adapters.sql_api_key_store import SqlApiKeyStore
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore
from locus.gateway.admission import AdmissionGate
from locus.gateway.asking import Asker
from locus.gateway.domain.learned_ranking import LearnedRanking, RankerModel
from locus.gateway.domain.ports import (
    ApiKeyStore,
    AuditTrail,
    MetadataStore,
    Reranker,
    TokenVerifier,
)
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import Ranker
from locus.gateway.domain.ranking_weights import RankingWeights
from locus.gateway.locating import Locator
from locus.gateway.reading import FileReader
from locus.gateway.request_log import RequestHistory, RequestJournal
from locus.gateway.scoping import ScopedQuestions
from locus.gateway.settings import GatewaySettings
from locus.messaging import EventBus
from locus.rpc import Component, MeshCredentials, RpcServer, ServiceRuntime, StoreLifecycle
from locus.telemetry import configure_logging, setup_telemetry
from locus.telemetry.metrics import MetricsEndpoint
from locus.v1 import gateway_pb2, gateway_pb2_grpc


def hand_ranking(settings: GatewaySettings) -> RankingV1:
    """The hand ranking: it picks Locate's graph seeds, and ranks when ``ranker`` is "hand"."""
    return RankingV1(RankingWeights.with_overrides(settings.ranking_weights))


def configured_ranker(settings: GatewaySettings, hand: RankingV1) -> Ranker:
    """The ranker that orders Locate's candidates (``settings.ranker``). A model that cannot
    be read stops the gateway at start-up (RankerModelError says why)."""
    if settings.ranker == "learned":
        return LearnedRanking(RankerModel.load(settings.ranker_model_path), hand)
    return hand


def token_verifier(settings: GatewaySettings) -> TokenVerifier | None:
    """The OIDC token verifier, when an issuer is configured."""
    if not settings.oidc_issuer:
        return None
    return OidcTokenVerifier(
        issuer=settings.oidc_issuer,
        audience=settings.oidc_audience,
        jwks_url=settings.oidc_jwks_url,
        algorithms=settings.oidc_algorithms,
        groups_claim=settings.oidc_groups_claim,
        role_mapping=settings.oidc_role_mapping,
        jwks_cache_seconds=settings.oidc_jwks_cache_seconds,
        jwks_refetch_cooldown_seconds=settings.oidc_jwks_refetch_cooldown_seconds,
        leeway_seconds=settings.oidc_leeway_seconds,
    )


def build(
    settings: GatewaySettings,
    *,
    exporters: Sequence[SpanExporter] = (),
    store: MetadataStore | None = None,
    ranker: Ranker | None = None,
    reranker: Reranker | None = None,
    audit: AuditTrail | None = None,
    api_keys: ApiKeyStore | None = None,
    tokens: TokenVerifier | None = None,
) -> ServiceRuntime:
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    mesh = MeshCredentials.from_settings(settings)  # what calls to the peers carry
    metadata = store or SqlMetadataStore(
        Database(settings.sqlalchemy_url("gateway.db")),
        migrate_on_start=settings.migrate_on_start,
    )
    # The keys live in the gateway's database, beside the request log (its own connection pool).
    sql_keys = (
        SqlApiKeyStore(
            Database(settings.sqlalchemy_url("gateway.db")),
            migrate_on_start=settings.migrate_on_start,
        )
        if api_keys is None
        else None
    )
    keys: ApiKeyStore = api_keys or sql_keys  # type: ignore[assignment]
    bus = EventBus.from_settings(settings, telemetry)
    bus_audit = BusAuditTrail(bus, publish_timeout_seconds=settings.audit_publish_timeout_seconds)
    peers = settings.peers
    clients = PeerClients.connect(
        telemetry,
        default_timeout=settings.rpc_timeout_seconds,
        mesh=mesh,
        ingestion=Peer("ingestion", peers.ingestion_addr, settings.ingestion_timeout_seconds),
        ast=Peer("ast", peers.ast_addr, settings.ast_timeout_seconds),
        retrieval=Peer("retrieval", peers.retrieval_addr, settings.retrieval_timeout_seconds),
        impact=Peer("impact", peers.impact_addr, settings.impact_timeout_seconds),
        answer=Peer("answer", peers.answer_addr, settings.answer_timeout_seconds),
    )
    audit_trail = audit or bus_audit
    http_reranker = None
    if reranker is None and settings.rerank_url:
        http_reranker = HttpReranker(
            settings.rerank_url,
            settings.rerank_model,
            api_key=settings.rerank_api_key.get_secret_value(),
            top_n=settings.rerank_top_n,
            max_document_chars=settings.rerank_max_document_chars,
            timeout_seconds=settings.rerank_timeout_seconds,
            weight=settings.rerank_weight,
            tracer=telemetry.tracer("locus.gateway"),
            tracer_provider=telemetry.provider,
        )
    journal = RequestJournal(metadata, audit_trail, drain_seconds=settings.shutdown_grace_seconds)
    hand = hand_ranking(settings)
    if ranker is None:
        ranker = configured_ranker(settings, hand)
    locator = Locator(
        settings,
        projects=clients.ingestion,
        search=clients.retrieval,
        symbols=clients.ast,
        impact=clients.impact,
        ranker=ranker or hand,
        reranker=reranker or http_reranker or IdentityReranker(),
        tracer=telemetry.tracer("locus.gateway"),
        seed_ranker=hand,
    )
    access = AccessControl(
        keys,
        IngestionProjectDirectory(clients.ingestion),
        audit_trail,
        tokens=tokens or token_verifier(settings),
    )
    files = FileReader(clients.ingestion, clients.ingestion)
    servicer = GatewayServicer(
        clients,
        locator,
        Asker(settings, locator, clients.answer, journal, files),
        journal,
        RequestHistory(metadata, audit_trail),
        questions=AdmissionGate(
            "locate/search",
            limit=settings.max_concurrent_questions,
            queue=settings.max_queued_questions,
            max_wait_seconds=settings.max_queue_wait_seconds,
        ),
        answers=AdmissionGate(
            "ask",
            limit=settings.max_concurrent_answers,
            queue=settings.max_queued_questions,
            max_wait_seconds=settings.max_queue_wait_seconds,
        ),
        access=access,
        files=files,
        scoped=ScopedQuestions(settings, clients.ingestion, access, locator, clients.retrieval),
    )
    # The public API: no service token (callers authenticate with API keys or OIDC tokens); TLS
    # with the deployment's certificate when one is configured, no client certificate asked.
    server = RpcServer(
        settings.grpc_bind,
        telemetry,
        mesh=None,
        public_tls=mesh.tls,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    server.add_service(
        gateway_pb2_grpc.add_GatewayServicer_to_server,
        servicer,
        gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].full_name,
    )
    # Started in this order, stopped in reverse: outcomes still being recorded are drained
    # before the audit trail, the bus and the store go away.
    components: list[Component] = [StoreLifecycle(metadata), bus, bus_audit, journal, clients]
    if sql_keys is not None:
        components.insert(1, StoreLifecycle(sql_keys))
    if settings.admin_key_file is not None:
        components.append(BootstrapAdminKey(access, settings.admin_key_file))
    if http_reranker is not None:
        components.append(http_reranker)
    return ServiceRuntime(
        settings.service_name,
        server,
        telemetry,
        components,
        metrics=MetricsEndpoint.from_settings(settings),
    )
