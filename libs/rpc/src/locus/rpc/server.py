"""grpc.aio server: tracing, request IDs, typed errors, health (NOT_SERVING until the service
says it is ready), reflection and a graceful stop.

Requests are decoded here, not by grpc: bytes that are not a valid message of the method's
request type (corrupt protobuf, invalid UTF-8 in a string field) are answered INVALID_ARGUMENT
with a message saying so, where grpc itself would answer UNKNOWN. Every error message leaves
redacted (no credentials) and bounded (no unbounded input echoed into the trailers)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry import trace
from opentelemetry.instrumentation.grpc import aio_server_interceptor

from locus.rpc.errors import InvalidArgument, ServiceError
from locus.telemetry import (
    REQUEST_ID_ATTRIBUTE,
    REQUEST_ID_HEADER,
    Telemetry,
    current_request_id,
    new_request_id,
    safe_message,
    with_request_id,
)
from locus.telemetry.metrics import RPC_REQUESTS, RPC_SECONDS
from locus.telemetry.request_id import is_valid_request_id

log = logging.getLogger(__name__)

Behavior = Callable[..., Any]


def _request_id_for(context: grpc.aio.ServicerContext) -> str:
    incoming = dict(context.invocation_metadata() or ()).get(REQUEST_ID_HEADER)
    if isinstance(incoming, str) and is_valid_request_id(incoming):
        return incoming
    return current_request_id() or new_request_id()


async def _fail(context: grpc.aio.ServicerContext, error: Exception) -> None:
    if isinstance(error, ServiceError):
        await context.abort(error.code, safe_message(error.message))
    log.exception("unhandled error in %s", type(error).__name__)
    await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(error).__name__}")


Deserializer = Callable[[bytes], Any]


def _decode(deserializer: Deserializer | None, raw: Any) -> Any:
    """The request message of ``raw`` bytes; InvalidArgument when they are not one."""
    if deserializer is None or not isinstance(raw, bytes):
        return raw
    try:
        return deserializer(raw)
    except Exception as error:  # DecodeError, invalid UTF-8, anything the parser raises
        name = getattr(getattr(deserializer, "__self__", None), "__name__", "the request type")
        raise InvalidArgument(
            f"the request is not a valid {name} message ({type(error).__name__}: {error}); "
            "send a message of the method's request type, serialized by a protobuf library"
        ) from None


def _code_of(context: grpc.aio.ServicerContext, error: BaseException) -> str:
    """The status a call that ended with ``error`` answered (its abort's code, else why)."""
    code = context.code()
    if not isinstance(code, grpc.StatusCode) or code == grpc.StatusCode.OK:
        cancelled = isinstance(error, (asyncio.CancelledError, GeneratorExit))
        code = grpc.StatusCode.CANCELLED if cancelled else grpc.StatusCode.UNKNOWN
    return str(code.name)


@contextlib.asynccontextmanager
async def _serving(method: str, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
    """One call of ``method``: its request ID made current, set on the span and returned to the
    caller; ServiceError and unexpected errors turned into their status; its RED metrics
    (duration, status code) recorded however it ends."""
    started, code = time.perf_counter(), "OK"
    request_id = _request_id_for(context)
    try:
        with with_request_id(request_id):
            trace.get_current_span().set_attribute(REQUEST_ID_ATTRIBUTE, request_id)
            await context.send_initial_metadata(((REQUEST_ID_HEADER, request_id),))
            try:
                yield
            except grpc.aio.AbortError:
                raise
            except Exception as error:
                await _fail(context, error)
    except BaseException as error:
        code = _code_of(context, error)
        raise
    finally:
        RPC_SECONDS.labels(method).observe(time.perf_counter() - started)
        RPC_REQUESTS.labels(method, code).inc()


def _wrap_unary(
    behavior: Behavior, deserializer: Deserializer | None = None, method: str = ""
) -> Behavior:
    async def wrapped(raw: Any, context: grpc.aio.ServicerContext) -> Any:
        async with _serving(method, context):
            return await behavior(_decode(deserializer, raw), context)

    return wrapped


def _wrap_stream(
    behavior: Behavior, deserializer: Deserializer | None = None, method: str = ""
) -> Behavior:
    async def wrapped(raw: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async with _serving(method, context):
            async for item in behavior(_decode(deserializer, raw), context):
                yield item

    return wrapped


class RequestContextInterceptor(grpc.aio.ServerInterceptor):
    """Runs inside the tracing interceptor: makes the request ID current, tags the span,
    returns the ID to the caller, and maps ServiceError to its status code."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler_call_details.method.startswith("/grpc."):
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        if handler.unary_unary:
            # The raw bytes reach the wrapper, which decodes them (INVALID_ARGUMENT when
            # they are not a message of the request type).
            return grpc.unary_unary_rpc_method_handler(
                _wrap_unary(handler.unary_unary, handler.request_deserializer, method),
                request_deserializer=None,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                _wrap_stream(handler.unary_stream, handler.request_deserializer, method),
                request_deserializer=None,
                response_serializer=handler.response_serializer,
            )
        return handler


class RpcServer:
    """One grpc.aio server per service process."""

    def __init__(self, bind: str, telemetry: Telemetry, *, grace_seconds: float = 10.0) -> None:
        self._bind = bind
        self._grace = grace_seconds
        self._server = grpc.aio.server(
            interceptors=[
                aio_server_interceptor(tracer_provider=telemetry.provider),
                RequestContextInterceptor(),
            ],
            options=[
                ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ],
        )
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        self._service_names: list[str] = []
        self.port = 0

    @property
    def address(self) -> str:
        host = self._bind.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    def add_service(
        self, register: Callable[[Any, grpc.aio.Server], None], servicer: Any, full_name: str
    ) -> None:
        register(servicer, self._server)
        self._service_names.append(full_name)

    async def start(self) -> int:
        reflection.enable_server_reflection(
            [*self._service_names, health.SERVICE_NAME, reflection.SERVICE_NAME], self._server
        )
        self.port = self._server.add_insecure_port(self._bind)
        if self.port == 0:
            raise RuntimeError(f"cannot bind gRPC server to {self._bind}")
        await self._set_all(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self._server.start()
        log.info("gRPC listening on %s", self.address)
        return self.port

    async def mark_serving(self) -> None:
        await self._set_all(health_pb2.HealthCheckResponse.SERVING)

    async def mark_not_serving(self) -> None:
        await self._set_all(health_pb2.HealthCheckResponse.NOT_SERVING)

    async def _set_all(self, status: int) -> None:
        for name in ("", *self._service_names):
            await self._health.set(name, status)

    async def stop(self) -> None:
        await self.mark_not_serving()
        await self._server.stop(self._grace)
