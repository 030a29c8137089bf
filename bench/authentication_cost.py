"""What authenticating a call costs on the gateway: ``WhoAmI`` with an API key (the credential
checked, one key lookup in the gateway's store, nothing else) beside the standard gRPC health
``Check`` of the same gateway (never authenticated) as the baseline; both over one channel whose
calls all carry the key, one call at a time, alternating so both see the same machine."""

from __future__ import annotations

import time
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from locate_latency import LatencySummary

from locus.rpc.bearer import bearer_interceptors
from locus.v1 import gateway_pb2, gateway_pb2_grpc

WARM_UP_CALLS = 20
CALL_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class AuthenticationCost:
    who_am_i: LatencySummary  # authenticated with the stack's admin key
    health_check: LatencySummary  # the baseline: no authentication


async def measure_authentication_cost(
    gateway_address: str, api_key: str, *, calls: int
) -> AuthenticationCost:
    """``calls`` measured WhoAmI and as many health Checks, after unmeasured warm-up calls."""
    interceptors = bearer_interceptors(api_key)
    async with grpc.aio.insecure_channel(gateway_address, interceptors=interceptors) as channel:
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        who_am_i_ms: list[float] = []
        health_ms: list[float] = []
        for call in range(WARM_UP_CALLS + calls):
            started = time.perf_counter()
            await gateway.WhoAmI(gateway_pb2.WhoAmIRequest(), timeout=CALL_TIMEOUT_SECONDS)
            who_am_i_elapsed = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            await health.Check(health_pb2.HealthCheckRequest(), timeout=CALL_TIMEOUT_SECONDS)
            health_elapsed = (time.perf_counter() - started) * 1000
            if call >= WARM_UP_CALLS:
                who_am_i_ms.append(who_am_i_elapsed)
                health_ms.append(health_elapsed)
    return AuthenticationCost(LatencySummary.of(who_am_i_ms), LatencySummary.of(health_ms))
