"""Outbound gRPC channels: traced, a deadline on every call, the request ID in metadata, and the
deployment's mesh credentials (service token header, mTLS) when they are given."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.instrumentation.grpc import aio_client_interceptors

from locus.rpc.mesh import SERVICE_TOKEN_HEADER, MeshCredentials
from locus.telemetry import REQUEST_ID_HEADER, Telemetry, current_request_id

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]


def _with_defaults(
    details: grpc.aio.ClientCallDetails, timeout: float, mesh: MeshCredentials | None
) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata(*(tuple(details.metadata) if details.metadata else ()))
    request_id = current_request_id()
    if request_id and not metadata.get_all(REQUEST_ID_HEADER):
        metadata.add(REQUEST_ID_HEADER, request_id)
    if mesh is not None and not metadata.get_all(SERVICE_TOKEN_HEADER):
        for key, value in mesh.metadata():
            metadata.add(key, value)
    return grpc.aio.ClientCallDetails(
        method=details.method,
        timeout=details.timeout if details.timeout is not None else timeout,
        metadata=metadata,
        credentials=details.credentials,
        wait_for_ready=details.wait_for_ready,
    )


class _DefaultsUnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, timeout: float, mesh: MeshCredentials | None) -> None:
        self._timeout = timeout
        self._mesh = mesh

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        details = _with_defaults(client_call_details, self._timeout, self._mesh)
        return await continuation(details, request)


class _DefaultsUnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, timeout: float, mesh: MeshCredentials | None) -> None:
        self._timeout = timeout
        self._mesh = mesh

    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        details = _with_defaults(client_call_details, self._timeout, self._mesh)
        return await continuation(details, request)


def open_channel(
    target: str,
    mesh: MeshCredentials | None,
    *,
    interceptors: list[Any] | None = None,
    options: list[tuple[str, Any]] | None = None,
) -> grpc.aio.Channel:
    """A plain channel, over TLS with the mesh certificate when the credentials have one."""
    if mesh is not None and mesh.tls is not None:
        return grpc.aio.secure_channel(
            target, mesh.tls.channel_credentials(), options=options, interceptors=interceptors
        )
    return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)


def make_channel(
    target: str,
    telemetry: Telemetry | None,
    *,
    default_timeout: float = 30.0,
    mesh: MeshCredentials | None = None,
    extra_interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
) -> grpc.aio.Channel:
    """A channel whose calls all carry a deadline (``default_timeout`` unless the call sets one),
    the trace context and baggage, and ``x-request-id``; with ``mesh``, the service token
    (when there is one) and TLS with the mesh certificate (when configured);
    ``extra_interceptors`` run last (e.g. a caller's credential, ``bearer_interceptors``)."""
    interceptors: list[Any] = [
        _DefaultsUnaryUnary(default_timeout, mesh),
        _DefaultsUnaryStream(default_timeout, mesh),
        *extra_interceptors,
    ]
    if telemetry is not None:
        interceptors = [*aio_client_interceptors(tracer_provider=telemetry.provider), *interceptors]
    return open_channel(target, mesh, interceptors=interceptors, options=CHANNEL_OPTIONS)


async def wait_until_serving(
    target: str,
    *,
    within_seconds: float = 30.0,
    service: str = "",
    mesh: MeshCredentials | None = None,
) -> None:
    """Poll the standard health service until it answers SERVING, or raise TimeoutError. Health
    needs no token; with mTLS on, ``mesh`` must hold the certificate to get through the
    handshake."""
    deadline = time.monotonic() + within_seconds
    last_error = "no answer"
    # Short reconnect back-off: the default waits seconds between attempts at a port that is
    # not listening yet, which makes start-up waits needlessly slow.
    options = [
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 500),
    ]
    async with open_channel(target, mesh, options=options) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last_error = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.aio.AioRpcError as error:
                last_error = f"{error.code().name}: {(error.details() or '')[:200]}"
            await asyncio.sleep(0.1)
    raise TimeoutError(f"{target} not SERVING after {within_seconds:.0f}s (last: {last_error})")
