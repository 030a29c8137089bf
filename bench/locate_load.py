"""Locate (or Ask) under concurrency: N clients, each with its own gRPC channel to the gateway,
call Locate (Ask: its whole answer stream read) in a loop for a fixed time (a call started
before the end is waited for), each call with a client deadline. A call answered
RESOURCE_EXHAUSTED or UNAVAILABLE counts as shed (the client then waits 100 ms before its next
call, as a polite client backs off); any other error status counts as a failure under its status
name (DEADLINE_EXCEEDED, ...), and an Ask whose stream carries a GenerationError event under
"ANSWER_ERROR".

The clients run in the benchmark's own process, on the same cores as the stack: at high
client counts part of the latency is the client's own.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import grpc
from locate_latency import percentile

from locus.rpc.bearer import bearer_interceptors
from locus.v1 import gateway_pb2, gateway_pb2_grpc

SHED_CODES = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE)
BACK_OFF_AFTER_SHED_SECONDS = 0.1
Rpc = Literal["Locate", "Ask"]


@dataclass(frozen=True)
class LoadLevel:
    clients: int
    seconds: float  # from the common start until the last call ended
    succeeded: int
    shed: int
    failures: dict[str, int] = field(default_factory=dict)
    p50_ms: float = float("nan")
    p95_ms: float = float("nan")
    background: str = ""  # what else ran meanwhile (the scan's progress)
    shed_codes: dict[str, int] = field(default_factory=dict)  # shed calls by status name
    first_messages: dict[str, str] = field(default_factory=dict)  # status name → its first

    @property
    def calls_per_second(self) -> float:
        return self.succeeded / self.seconds if self.seconds else 0.0

    @property
    def failed(self) -> int:
        return sum(self.failures.values())


@dataclass
class _Tally:
    latencies_ms: list[float] = field(default_factory=list)
    shed: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    first_messages: dict[str, str] = field(default_factory=dict)


async def _client_loop(
    channel: grpc.aio.Channel,
    requests: list[gateway_pb2.LocateRequest],
    until: float,
    deadline_seconds: float,
    tally: _Tally,
    rpc: Rpc,
) -> None:
    stub = gateway_pb2_grpc.GatewayStub(channel)
    call = 0
    while time.perf_counter() < until:
        request = requests[call % len(requests)]
        call += 1
        began = time.perf_counter()
        try:
            if rpc == "Ask":
                if not await _ask(stub, request, deadline_seconds):
                    tally.failures["ANSWER_ERROR"] += 1
                    continue
            else:
                await stub.Locate(request, timeout=deadline_seconds)
        except grpc.aio.AioRpcError as error:
            tally.first_messages.setdefault(error.code().name, (error.details() or "")[:200])
            if error.code() in SHED_CODES:
                tally.shed[error.code().name] += 1
                await asyncio.sleep(BACK_OFF_AFTER_SHED_SECONDS)
            else:
                tally.failures[error.code().name] += 1
            continue
        tally.latencies_ms.append((time.perf_counter() - began) * 1000)


async def _ask(
    stub: gateway_pb2_grpc.GatewayStub, request: gateway_pb2.LocateRequest, deadline_seconds: float
) -> bool:
    """One Ask, its stream read to the end; False when the answer ended in an error event."""
    ask = gateway_pb2.AskRequest(project_id=request.project_id, question=request.question)
    answered = True
    async for event in stub.Ask(ask, timeout=deadline_seconds):
        if event.WhichOneof("event") == "error":
            answered = False
    return answered


async def run_load_level(
    gateway_address: str,
    project: str,
    questions: list[str],
    *,
    api_key: str,
    clients: int,
    duration_seconds: float,
    deadline_seconds: float,
    rpc: Rpc = "Locate",
) -> LoadLevel:
    """One level: ``clients`` channels whose calls all carry ``api_key``."""
    channels = [
        grpc.aio.insecure_channel(gateway_address, interceptors=bearer_interceptors(api_key))
        for _ in range(clients)
    ]
    try:
        await asyncio.gather(*(channel.channel_ready() for channel in channels))
        requests = [
            gateway_pb2.LocateRequest(project_id=project, question=question)
            for question in questions
        ]
        tally = _Tally()
        began = time.perf_counter()
        await asyncio.gather(
            *(
                _client_loop(
                    channel,
                    requests[number % len(requests) :] + requests[: number % len(requests)],
                    began + duration_seconds,
                    deadline_seconds,
                    tally,
                    rpc,
                )
                for number, channel in enumerate(channels)
            )
        )
        elapsed = time.perf_counter() - began
    finally:
        await asyncio.gather(*(channel.close() for channel in channels))
    return LoadLevel(
        clients=clients,
        seconds=elapsed,
        succeeded=len(tally.latencies_ms),
        shed=sum(tally.shed.values()),
        shed_codes=dict(tally.shed),
        first_messages=tally.first_messages,
        failures=dict(tally.failures),
        p50_ms=percentile(tally.latencies_ms, 0.5),
        p95_ms=percentile(tally.latencies_ms, 0.95),
    )
