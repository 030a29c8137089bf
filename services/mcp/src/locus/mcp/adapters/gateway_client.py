"""The gateway's public API, one typed method per RPC the tools use. Every call carries the
caller's credential (``authorization: Bearer …``, given per call: over HTTP each MCP request
has its own) and, through the traced channel, the trace context and the request ID; with the
mTLS files (docs/adr/0009) the channel is TLS, the gateway's certificate checked against the
CA. A failed call raises GatewayError with the gateway's status and message; one that could
not reach the gateway also says how the gateway was called (plaintext or TLS)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from locus.rpc import MeshCredentials, TlsMaterial, make_channel
from locus.rpc.bearer import AUTHORIZATION
from locus.telemetry import Telemetry
from locus.v1 import (
    ast_pb2,
    gateway_pb2,
    gateway_pb2_grpc,
    impact_pb2,
    ingestion_pb2,
    retrieval_pb2,
)

_Reply = TypeVar("_Reply")


class GatewayError(Exception):
    """A gateway call failed; ``str()`` is ``"<STATUS>: <the gateway's message>"``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @classmethod
    def from_rpc(cls, error: grpc.aio.AioRpcError, transport: str = "") -> GatewayError:
        """The call's status and message; ``transport`` (how the gateway was called) follows
        the message of a call that did not reach it (UNAVAILABLE)."""
        message = error.details() or ""
        if transport and error.code() == grpc.StatusCode.UNAVAILABLE:
            message = f"{message} ({transport})"
        return cls(error.code().name, message)


def authorization_value(credential: str) -> str:
    """The header value for a credential: kept as given when it already names its scheme."""
    return credential if credential.lower().startswith("bearer ") else f"Bearer {credential}"


class GatewayClient:
    def __init__(
        self,
        address: str,
        telemetry: Telemetry | None,
        *,
        tls: TlsMaterial | None,
        timeout_seconds: float,
        ask_timeout_seconds: float,
    ) -> None:
        """``tls``: call the gateway over TLS, verifying its certificate against the CA and
        presenting this process's certificate; None: plaintext. Never the service token: the
        gateway is a public peer (docs/adr/0010)."""
        self.address = address
        self.transport = (
            f"gateway {address} over TLS, its certificate checked against LOCUS_TLS_CA_FILE"
            if tls is not None
            else f"gateway {address} in plaintext; a gateway serving TLS needs "
            "LOCUS_TLS_CERT_FILE, LOCUS_TLS_KEY_FILE and LOCUS_TLS_CA_FILE"
        )
        self._channel = make_channel(
            address,
            telemetry,
            default_timeout=timeout_seconds,
            mesh=MeshCredentials("", tls) if tls is not None else None,
        )
        self._stub = gateway_pb2_grpc.GatewayStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)
        self._ask_timeout = ask_timeout_seconds

    async def close(self) -> None:
        await self._channel.close()

    async def health(self, timeout_seconds: float = 2.0) -> str:
        """The gateway's serving status (SERVING when it serves), or why its health check
        failed."""
        try:
            reply = await self._health.Check(
                health_pb2.HealthCheckRequest(), timeout=timeout_seconds
            )
        except grpc.aio.AioRpcError as error:
            return str(GatewayError.from_rpc(error, self.transport))
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))

    async def get_project(
        self, credential: str, request: ingestion_pb2.GetProjectRequest
    ) -> ingestion_pb2.Project:
        return await self._unary(self._stub.GetProject, request, credential)

    async def list_projects(
        self, credential: str, request: ingestion_pb2.ListProjectsRequest
    ) -> ingestion_pb2.ListProjectsResponse:
        return await self._unary(self._stub.ListProjects, request, credential)

    async def locate(
        self, credential: str, request: gateway_pb2.LocateRequest
    ) -> gateway_pb2.LocateResponse:
        return await self._unary(self._stub.Locate, request, credential)

    async def search(
        self, credential: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        return await self._unary(self._stub.Search, request, credential)

    async def find_symbols(
        self, credential: str, request: ast_pb2.FindSymbolsRequest
    ) -> ast_pb2.FindSymbolsResponse:
        return await self._unary(self._stub.FindSymbols, request, credential)

    async def get_ast_node(
        self, credential: str, request: ast_pb2.GetNodeRequest
    ) -> ast_pb2.GetNodeResponse:
        return await self._unary(self._stub.GetAstNode, request, credential)

    async def compute_impact(
        self, credential: str, request: impact_pb2.ComputeImpactRequest
    ) -> impact_pb2.ComputeImpactResponse:
        return await self._unary(self._stub.ComputeImpact, request, credential)

    async def read_file(
        self, credential: str, request: gateway_pb2.ReadFileRequest
    ) -> gateway_pb2.ReadFileResponse:
        return await self._unary(self._stub.ReadFile, request, credential)

    async def ask(
        self, credential: str, request: gateway_pb2.AskRequest
    ) -> AsyncIterator[gateway_pb2.AskEvent]:
        """The answer's events as they stream; leaving the loop early cancels the answer."""
        call = self._stub.Ask(request, metadata=_metadata(credential), timeout=self._ask_timeout)
        try:
            async for event in call:
                yield event
        except grpc.aio.AioRpcError as error:
            raise GatewayError.from_rpc(error, self.transport) from None
        finally:
            call.cancel()

    async def _unary(
        self, rpc: Callable[..., Awaitable[_Reply]], request: object, credential: str
    ) -> _Reply:
        """``rpc(request)`` with the caller's credential; a failed call raises GatewayError."""
        try:
            return await rpc(request, metadata=_metadata(credential))
        except grpc.aio.AioRpcError as error:
            raise GatewayError.from_rpc(error, self.transport) from None


def _metadata(credential: str) -> tuple[tuple[str, str], ...]:
    return ((AUTHORIZATION, authorization_value(credential)),) if credential else ()
