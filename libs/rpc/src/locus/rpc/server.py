"""grpc.aio server: tracing, request IDs, typed errors, health (NOT_SERVING until the service
says it is ready), reflection and a graceful stop. An internal service's server requires the
mesh credentials (docs/adr/0009): the service token on every call but health checks, and with
mTLS a client certificate; the gateway's public server requires neither.

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
from typing import TYPE_CHECKING, Any, TypeAlias

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry import trace
from opentelemetry.instrumentation.grpc import aio_server_interceptor

from locus.rpc.errors import InvalidArgument, ServiceError
from locus.rpc.mesh import SERVICE_TOKEN_HEADER, MeshCredentials, TlsMaterial
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

# The context every handler receives. Messages are typed by each handler's own request and
# response annotations; the context's parameters would only repeat them.
RpcContext = grpc.aio.ServicerContext[Any, Any]
if TYPE_CHECKING:  # grpc's handler class is generic in its stubs only
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    Continuation: TypeAlias = Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]]


def _request_id_for(context: RpcContext) -> str:
    incoming = dict(context.invocation_metadata() or ()).get(REQUEST_ID_HEADER)
    if isinstance(incoming, str) and is_valid_request_id(incoming):
        return incoming
    return current_request_id() or new_request_id()


async def _fail(context: RpcContext, error: Exception) -> None:
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


def _code_of(context: RpcContext, error: BaseException) -> str:
    """The status a call that ended with ``error`` answered (its abort's code, else why)."""
    code = context.code()
    if not isinstance(code, grpc.StatusCode) or code == grpc.StatusCode.OK:
        cancelled = isinstance(error, (asyncio.CancelledError, GeneratorExit))
        code = grpc.StatusCode.CANCELLED if cancelled else grpc.StatusCode.UNKNOWN
    return str(code.name)


@contextlib.asynccontextmanager
async def _serving(method: str, context: RpcContext) -> AsyncIterator[None]:
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
    async def wrapped(raw: Any, context: RpcContext) -> Any:
        async with _serving(method, context):
            return await behavior(_decode(deserializer, raw), context)

    return wrapped


def _wrap_stream(
    behavior: Behavior, deserializer: Deserializer | None = None, method: str = ""
) -> Behavior:
    async def wrapped(raw: Any, context: RpcContext) -> AsyncIterator[Any]:
        async with _serving(method, context):
            async for item in behavior(_decode(deserializer, raw), context):
                yield item

    return wrapped


class RequestContextInterceptor(grpc.aio.ServerInterceptor):
    """Runs inside the tracing interceptor: makes the request ID current, tags the span,
    returns the ID to the caller, and maps ServiceError to its status code."""

    async def intercept_service(
        self,
        continuation: Continuation,
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
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


HEALTH_METHODS = f"/{health.SERVICE_NAME}/"
REFUSAL = (
    "this is an internal Locus service: calls need the deployment's service token in the "
    f"{SERVICE_TOKEN_HEADER} metadata header, and {{why}}; give the caller the token this "
    "service has (set LOCUS_SERVICE_TOKEN or LOCUS_SERVICE_TOKEN_FILE; `locus up` keeps it in "
    "<data dir>/service-token), or call the public gateway instead"
)
REFUSAL_LOG_INTERVAL_SECONDS = 60.0


def _header(metadata: Any, name: str) -> str | bytes | None:
    for key, value in metadata or ():
        if key == name:
            return value  # type: ignore[no-any-return]
    return None


class ServiceTokenInterceptor(grpc.aio.ServerInterceptor):
    """Outermost on an internal server: a call without the deployment's service token, or with
    another, is answered UNAUTHENTICATED before any other interceptor or the servicer sees it.
    Health checks pass without it (Kubernetes gRPC probes cannot send metadata). Refusals are
    logged at most once a minute (with how many there were), never with what was presented."""

    def __init__(self, mesh: MeshCredentials) -> None:
        self._mesh = mesh
        self._refused_since_log = 0
        self._last_log = -REFUSAL_LOG_INTERVAL_SECONDS

    async def intercept_service(
        self,
        continuation: Continuation,
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        method = handler_call_details.method
        if method.startswith(HEALTH_METHODS):
            return await continuation(handler_call_details)
        presented = _header(handler_call_details.invocation_metadata, SERVICE_TOKEN_HEADER)
        if self._mesh.accepts(presented):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        why = (
            "this call carried none"
            if presented is None
            else "the one this call carried is not this deployment's"
        )
        return self._refusing(handler, method, why)

    def _refusing(self, handler: Handler, method: str, why: str) -> Handler:
        async def refuse(request: Any, context: RpcContext) -> None:
            self._note(method, why, context.peer())
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSAL.format(why=why))

        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(refuse)
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(refuse)
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(refuse)
        return grpc.stream_stream_rpc_method_handler(refuse)

    def _note(self, method: str, why: str, peer: str) -> None:
        self._refused_since_log += 1
        now = time.monotonic()
        if now - self._last_log < REFUSAL_LOG_INTERVAL_SECONDS:
            return
        log.warning(
            "refused %s from %s without the service token (%s); %d call(s) refused since the "
            "last such warning",
            method,
            peer,
            why,
            self._refused_since_log,
        )
        self._last_log, self._refused_since_log = now, 0


class RpcServer:
    """One grpc.aio server per service process.

    ``mesh``: the credentials of an internal service's server (the service token on every call
    but health checks; with mTLS, TLS and a client certificate signed by the mesh CA). None for
    the gateway's public server, which authenticates its callers itself and serves TLS without
    client certificates when given ``public_tls``."""

    def __init__(
        self,
        bind: str,
        telemetry: Telemetry,
        *,
        mesh: MeshCredentials | None,
        public_tls: TlsMaterial | None = None,
        grace_seconds: float = 10.0,
    ) -> None:
        if mesh is not None and public_tls is not None:
            raise ValueError("an internal server serves with the mesh's TLS, not public_tls")
        self._bind = bind
        self._grace = grace_seconds
        self._mesh = mesh
        self._public_tls = public_tls
        interceptors: list[grpc.aio.ServerInterceptor] = [
            aio_server_interceptor(tracer_provider=telemetry.provider),
            RequestContextInterceptor(),
        ]
        if mesh is not None and mesh.has_token:
            interceptors.insert(0, ServiceTokenInterceptor(mesh))
        self._server = grpc.aio.server(
            interceptors=interceptors,
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
        credentials = self._credentials()
        if credentials is None:
            self.port = self._server.add_insecure_port(self._bind)
        else:
            self.port = self._server.add_secure_port(self._bind, credentials)
        if self.port == 0:
            raise RuntimeError(f"cannot bind gRPC server to {self._bind}")
        await self._set_all(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self._server.start()
        log.info("gRPC listening on %s (%s)", self.address, self._describe_callers())
        if self._mesh is not None and self._mesh.is_open:
            log.warning(
                "no service token and no mTLS configured: the internal RPCs on %s are open to "
                "anyone who can reach the port; set LOCUS_SERVICE_TOKEN or "
                "LOCUS_SERVICE_TOKEN_FILE (the same for every service of the deployment)",
                self.address,
            )
        return self.port

    def _credentials(self) -> grpc.ServerCredentials | None:
        if self._mesh is not None and self._mesh.tls is not None:
            return self._mesh.tls.server_credentials(require_client_certificates=True)
        if self._public_tls is not None:
            return self._public_tls.server_credentials(require_client_certificates=False)
        return None

    def _describe_callers(self) -> str:
        if self._mesh is None:
            return "public, TLS" if self._public_tls is not None else "public, plaintext"
        parts = ["service token" if self._mesh.has_token else "no service token"]
        parts.append("mTLS" if self._mesh.tls is not None else "plaintext")
        return "internal: " + ", ".join(parts)

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
