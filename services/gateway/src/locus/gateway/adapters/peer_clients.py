"""gRPC clients of the downstream services. One traced channel per peer (``make_channel``: a
deadline on every call, ``traceparent``, baggage and ``x-request-id`` forwarded) and a per-call
deadline from the settings. A downstream error keeps its status code and message; a peer that is
down or too slow becomes UNAVAILABLE / DEADLINE_EXCEEDED with a message naming it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc

from locus.rpc import (
    Cancelled,
    DeadlineExceeded,
    MeshCredentials,
    ServiceError,
    Unavailable,
    make_channel,
)
from locus.telemetry import Telemetry
from locus.v1 import (
    answer_pb2_grpc,
    ast_pb2_grpc,
    impact_pb2_grpc,
    ingestion_pb2,
    ingestion_pb2_grpc,
    retrieval_pb2_grpc,
)

log = logging.getLogger(__name__)


class DownstreamError(ServiceError):
    """A status a downstream service returned, passed on unchanged."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Peer:
    name: str  # "ingestion", "ast", ...
    address: str
    timeout_seconds: float


def translate_error(peer: Peer, error: grpc.aio.AioRpcError) -> ServiceError:
    code = error.code()
    details = error.details() or code.name
    if code == grpc.StatusCode.UNAVAILABLE:
        return Unavailable(f"{peer.name} service at {peer.address} is unavailable: {details}")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return DeadlineExceeded(
            f"{peer.name} service at {peer.address} did not answer within "
            f"{peer.timeout_seconds:g}s: {details}"
        )
    if code == grpc.StatusCode.CANCELLED:
        return Cancelled(f"call to the {peer.name} service was cancelled: {details}")
    return DownstreamError(code, details)


class PeerClient:
    """A stub of one peer with deadlines and error translation."""

    def __init__(self, peer: Peer, channel: grpc.aio.Channel, stub: Any) -> None:
        self.peer = peer
        self.channel = channel
        self.stub = stub

    async def call(self, method: str, request: Any) -> Any:
        try:
            return await getattr(self.stub, method)(request, timeout=self.peer.timeout_seconds)
        except grpc.aio.AioRpcError as error:
            raise translate_error(self.peer, error) from None

    def stream(self, method: str, request: Any) -> PeerStream:
        call = getattr(self.stub, method)(request, timeout=self.peer.timeout_seconds)
        return PeerStream(self.peer, call)


class PeerStream:
    """A server-streaming call: iterate it once; ``cancel`` ends it on both sides."""

    def __init__(self, peer: Peer, call: Any) -> None:
        self._peer = peer
        self._call = call

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._events()

    async def _events(self) -> AsyncIterator[Any]:
        try:
            async for event in self._call:
                yield event
        except grpc.aio.AioRpcError as error:
            raise translate_error(self._peer, error) from None

    def cancel(self) -> None:
        if not self._call.done():
            self._call.cancel()


class IngestionClient(PeerClient):
    async def get_project(self, project_ref: str) -> Any:
        return await self.call(
            "GetProject", ingestion_pb2.GetProjectRequest(project_id=project_ref)
        )

    async def list_projects(self, request: Any) -> Any:
        return await self.call("ListProjects", request)

    async def score_file_history(self, request: Any) -> Any:
        return await self.call("ScoreFileHistory", request)

    async def list_files(self, request: Any) -> Any:
        return await self.call("ListFiles", request)

    async def get_file_content(self, request: Any) -> Any:
        return await self.call("GetFileContent", request)


class AstClient(PeerClient):
    async def enrich(self, request: Any) -> Any:
        return await self.call("Enrich", request)

    async def list_file_symbols(self, request: Any) -> Any:
        return await self.call("ListFileSymbols", request)

    async def get_symbol_texts(self, request: Any) -> Any:
        return await self.call("GetSymbolTexts", request)

    async def find_symbols(self, request: Any) -> Any:
        return await self.call("FindSymbols", request)

    async def get_file_outline(self, request: Any) -> Any:
        return await self.call("GetFileOutline", request)


class RetrievalClient(PeerClient):
    async def search(self, request: Any) -> Any:
        return await self.call("Search", request)

    async def score_symbols(self, request: Any) -> Any:
        return await self.call("ScoreSymbols", request)


class ImpactClient(PeerClient):
    async def compute(self, request: Any) -> Any:
        return await self.call("Compute", request)


class AnswerClient(PeerClient):
    def generate(self, request: Any) -> PeerStream:
        return self.stream("Generate", request)


@dataclass(frozen=True)
class PeerClients:
    ingestion: IngestionClient
    ast: AstClient
    retrieval: RetrievalClient
    impact: ImpactClient
    answer: AnswerClient

    @classmethod
    def connect(
        cls,
        telemetry: Telemetry | None,
        *,
        default_timeout: float,
        ingestion: Peer,
        ast: Peer,
        retrieval: Peer,
        impact: Peer,
        answer: Peer,
        mesh: MeshCredentials | None = None,
    ) -> PeerClients:
        """Channels connect lazily: building clients needs no peer to be up. ``mesh``: the
        deployment's service token and mTLS certificate, which every call to a peer carries."""

        def channel(peer: Peer) -> grpc.aio.Channel:
            return make_channel(peer.address, telemetry, default_timeout=default_timeout, mesh=mesh)

        ingestion_channel = channel(ingestion)
        ast_channel = channel(ast)
        retrieval_channel = channel(retrieval)
        impact_channel = channel(impact)
        answer_channel = channel(answer)
        return cls(
            ingestion=IngestionClient(
                ingestion,
                ingestion_channel,
                ingestion_pb2_grpc.IngestionServiceStub(ingestion_channel),
            ),
            ast=AstClient(ast, ast_channel, ast_pb2_grpc.AstServiceStub(ast_channel)),
            retrieval=RetrievalClient(
                retrieval,
                retrieval_channel,
                retrieval_pb2_grpc.RetrievalServiceStub(retrieval_channel),
            ),
            impact=ImpactClient(
                impact, impact_channel, impact_pb2_grpc.ImpactServiceStub(impact_channel)
            ),
            answer=AnswerClient(
                answer, answer_channel, answer_pb2_grpc.AnswerServiceStub(answer_channel)
            ),
        )

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        for client in (self.ingestion, self.ast, self.retrieval, self.impact, self.answer):
            try:
                await client.channel.close()
            except Exception:  # closing must not stop the shutdown of the others
                log.exception("error closing the channel to %s", client.peer.name)
