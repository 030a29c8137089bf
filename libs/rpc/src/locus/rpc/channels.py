"""Outbound gRPC channels: traced, a deadline on every call, the request ID in metadata."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.instrumentation.grpc import aio_client_interceptors

from locus.telemetry import REQUEST_ID_HEADER, Telemetry, current_request_id


def _with_defaults(
    details: grpc.aio.ClientCallDetails, timeout: float
) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata(*(tuple(details.metadata) if details.metadata else ()))
    request_id = current_request_id()
    if request_id and REQUEST_ID_HEADER not in metadata:
        metadata.add(REQUEST_ID_HEADER, request_id)
    return grpc.aio.ClientCallDetails(
        method=details.method,
        timeout=details.timeout if details.timeout is not None else timeout,
        metadata=metadata,
        credentials=details.credentials,
        wait_for_ready=details.wait_for_ready,
    )


class _DefaultsUnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, timeout: float) -> None:
        self._timeout = timeout

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return await continuation(_with_defaults(client_call_details, self._timeout), request)


class _DefaultsUnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, timeout: float) -> None:
        self._timeout = timeout

    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        return await continuation(_with_defaults(client_call_details, self._timeout), request)


def make_channel(
    target: str, telemetry: Telemetry | None, *, default_timeout: float = 30.0
) -> grpc.aio.Channel:
    """A channel whose calls all carry a deadline (``default_timeout`` unless the call sets one),
    the trace context and baggage, and ``x-request-id``."""
    interceptors: list[Any] = [
        _DefaultsUnaryUnary(default_timeout),
        _DefaultsUnaryStream(default_timeout),
    ]
    if telemetry is not None:
        interceptors = [*aio_client_interceptors(tracer_provider=telemetry.provider), *interceptors]
    return grpc.aio.insecure_channel(
        target,
        interceptors=interceptors,
        options=[
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
        ],
    )


async def wait_until_serving(
    target: str, *, within_seconds: float = 30.0, service: str = ""
) -> None:
    """Poll the standard health service until it answers SERVING, or raise TimeoutError."""
    deadline = time.monotonic() + within_seconds
    last_error = "no answer"
    # Short reconnect back-off: the default waits seconds between attempts at a port that is
    # not listening yet, which makes start-up waits needlessly slow.
    options = [
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 500),
    ]
    async with grpc.aio.insecure_channel(target, options=options) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last_error = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.aio.AioRpcError as error:
                last_error = error.code().name
            await asyncio.sleep(0.1)
    raise TimeoutError(f"{target} not SERVING after {within_seconds:.0f}s (last: {last_error})")
