"""Locate latency, one call at a time: through the gateway over gRPC (journaled, as a client
sees it), and in-process with the gateway's own `Locator` on the same peers (same downstream
calls, without the client→gateway hop and the request journal). Each measured set is preceded
by one unmeasured pass over the questions, so the figures are warm ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc

from locus.cli.stack_credentials import mesh_credentials
from locus.cli.stack_state import StackState
from locus.config import PeerAddresses
from locus.gateway.adapters.identity_reranker import IdentityReranker
from locus.gateway.adapters.peer_clients import Peer, PeerClients
from locus.gateway.locating import LocateQuery, Locator
from locus.gateway.main import configured_ranker, hand_ranking
from locus.gateway.request_log import OpenRequest
from locus.gateway.settings import GatewaySettings
from locus.rpc.bearer import bearer_interceptors
from locus.telemetry import Telemetry
from locus.v1 import gateway_pb2, gateway_pb2_grpc

PEER_TIMEOUT_SECONDS = 30


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass(frozen=True)
class LatencySummary:
    calls: int
    p50_ms: float
    p95_ms: float

    @classmethod
    def of(cls, milliseconds: list[float]) -> LatencySummary:
        return cls(len(milliseconds), percentile(milliseconds, 0.5), percentile(milliseconds, 0.95))


async def gateway_latencies(
    stub: gateway_pb2_grpc.GatewayStub, project: str, questions: list[str], rounds: int
) -> LatencySummary:
    milliseconds: list[float] = []
    for round_number in range(rounds + 1):
        for question in questions:
            started = time.perf_counter()
            await stub.Locate(gateway_pb2.LocateRequest(project_id=project, question=question))
            if round_number:  # round 0 warms up
                milliseconds.append((time.perf_counter() - started) * 1000)
    return LatencySummary.of(milliseconds)


async def in_process_latencies(
    stack: StackState,
    telemetry: Telemetry,
    project: str,
    questions: list[str],
    rounds: int,
) -> LatencySummary:
    peers = {
        name: Peer(name, stack.address_of(name), PEER_TIMEOUT_SECONDS)
        for name in ("ingestion", "ast", "retrieval", "impact", "answer")
    }
    settings = GatewaySettings(
        peers=PeerAddresses(
            gateway_addr=stack.address_of("gateway"),
            ingestion_addr=stack.address_of("ingestion"),
            ast_addr=stack.address_of("ast"),
            retrieval_addr=stack.address_of("retrieval"),
            impact_addr=stack.address_of("impact"),
            answer_addr=stack.address_of("answer"),
        )
    )
    # As the stack's gateway calls them: with the stack's service token.
    mesh = mesh_credentials(stack.service_token_file)
    clients = PeerClients.connect(telemetry, default_timeout=60, mesh=mesh, **peers)
    await clients.start()
    hand = hand_ranking(settings)
    locator = Locator(  # ranked as the gateway ranks (the learned model by default)
        settings,
        clients.ingestion,
        clients.retrieval,
        clients.ast,
        clients.impact,
        configured_ranker(settings, hand),
        IdentityReranker(),
        telemetry.tracer("bench"),
        seed_ranker=hand,
    )
    milliseconds: list[float] = []
    try:
        for round_number in range(rounds + 1):
            for question in questions:
                entry = OpenRequest("bench", "locate", project, datetime.now(UTC), time.monotonic())
                started = time.perf_counter()
                await locator.locate(LocateQuery(project_ref=project, question=question), entry)
                if round_number:
                    milliseconds.append((time.perf_counter() - started) * 1000)
    finally:
        await clients.stop()
    return LatencySummary.of(milliseconds)


async def first_locate_milliseconds(
    gateway_address: str,
    project: str,
    question: str,
    *,
    api_key: str,
    deadline_seconds: float,
) -> tuple[float, float]:
    """The first Locate on a new channel (calls carrying ``api_key``), and the second one
    right after it."""
    request = gateway_pb2.LocateRequest(project_id=project, question=question)
    interceptors = bearer_interceptors(api_key)
    async with grpc.aio.insecure_channel(gateway_address, interceptors=interceptors) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        started = time.perf_counter()
        await stub.Locate(request, timeout=deadline_seconds)
        first = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        await stub.Locate(request, timeout=deadline_seconds)
        return first, (time.perf_counter() - started) * 1000
