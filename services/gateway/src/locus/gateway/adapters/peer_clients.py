"""gRPC clients of the downstream services. One traced channel per peer (``make_channel``: a
deadline on every call, ``traceparent``, baggage and ``x-request-id`` forwarded) and a per-call
deadline from the settings. A downstream error keeps its status code and message; a peer that is
down or too slow becomes UNAVAILABLE / DEADLINE_EXCEEDED with a message naming it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

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
    answer_pb2,
    answer_pb2_grpc,
    ast_pb2,
    ast_pb2_grpc,
    impact_pb2,
    impact_pb2_grpc,
    ingestion_pb2,
    ingestion_pb2_grpc,
    retrieval_pb2,
    retrieval_pb2_grpc,
)

log = logging.getLogger(__name__)

Request = TypeVar("Request")
Response = TypeVar("Response")


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
    """A stub of one peer with deadlines and error translation. Each subclass names its stub's
    type and has one typed method per RPC the gateway's use cases call; the servicer's
    pass-through handlers call ``unary`` with the typed stub method itself."""

    def __init__(self, peer: Peer, channel: grpc.aio.Channel, stub: Any) -> None:
        self.peer = peer
        self.channel = channel
        self.stub = stub

    async def unary(
        self, method: grpc.aio.UnaryUnaryMultiCallable[Request, Response], request: Request
    ) -> Response:
        try:
            return await method(request, timeout=self.peer.timeout_seconds)
        except grpc.aio.AioRpcError as error:
            raise translate_error(self.peer, error) from None

    def stream(
        self, method: grpc.aio.UnaryStreamMultiCallable[Request, Response], request: Request
    ) -> PeerStream[Response]:
        return PeerStream(self.peer, method(request, timeout=self.peer.timeout_seconds))


class PeerStream(Generic[Response]):
    """A server-streaming call: iterate it once; ``cancel`` ends it on both sides."""

    def __init__(self, peer: Peer, call: grpc.aio.UnaryStreamCall[Any, Response]) -> None:
        self._peer = peer
        self._call = call

    def __aiter__(self) -> AsyncIterator[Response]:
        return self._events()

    async def _events(self) -> AsyncIterator[Response]:
        try:
            async for event in self._call:
                yield event
        except grpc.aio.AioRpcError as error:
            raise translate_error(self._peer, error) from None

    def cancel(self) -> None:
        if not self._call.done():
            self._call.cancel()


class IngestionClient(PeerClient):
    stub: ingestion_pb2_grpc.IngestionServiceAsyncStub

    async def get_project(self, project_ref: str) -> ingestion_pb2.Project:
        request = ingestion_pb2.GetProjectRequest(project_id=project_ref)
        return await self.unary(self.stub.GetProject, request)

    async def list_projects(
        self, request: ingestion_pb2.ListProjectsRequest
    ) -> ingestion_pb2.ListProjectsResponse:
        return await self.unary(self.stub.ListProjects, request)

    async def score_file_history(
        self, request: ingestion_pb2.ScoreFileHistoryRequest
    ) -> ingestion_pb2.ScoreFileHistoryResponse:
        return await self.unary(self.stub.ScoreFileHistory, request)

    async def list_files(
        self, request: ingestion_pb2.ListFilesRequest
    ) -> ingestion_pb2.ListFilesResponse:
        return await self.unary(self.stub.ListFiles, request)

    async def get_file_content(
        self, request: ingestion_pb2.GetFileContentRequest
    ) -> ingestion_pb2.GetFileContentResponse:
        return await self.unary(self.stub.GetFileContent, request)


class AstClient(PeerClient):
    stub: ast_pb2_grpc.AstServiceAsyncStub

    async def enrich(self, request: ast_pb2.EnrichRequest) -> ast_pb2.EnrichResponse:
        return await self.unary(self.stub.Enrich, request)

    async def list_file_symbols(
        self, request: ast_pb2.ListFileSymbolsRequest
    ) -> ast_pb2.ListFileSymbolsResponse:
        return await self.unary(self.stub.ListFileSymbols, request)

    async def get_symbol_texts(
        self, request: ast_pb2.GetSymbolTextsRequest
    ) -> ast_pb2.GetSymbolTextsResponse:
        return await self.unary(self.stub.GetSymbolTexts, request)

    async def find_symbols(
        self, request: ast_pb2.FindSymbolsRequest
    ) -> ast_pb2.FindSymbolsResponse:
        return await self.unary(self.stub.FindSymbols, request)

    async def get_file_outline(
        self, request: ast_pb2.GetFileOutlineRequest
    ) -> ast_pb2.GetFileOutlineResponse:
        return await self.unary(self.stub.GetFileOutline, request)


class RetrievalClient(PeerClient):
    stub: retrieval_pb2_grpc.RetrievalServiceAsyncStub

    async def search(self, request: retrieval_pb2.SearchRequest) -> retrieval_pb2.SearchResponse:
        return await self.unary(self.stub.Search, request)

    async def score_symbols(
        self, request: retrieval_pb2.ScoreSymbolsRequest
    ) -> retrieval_pb2.ScoreSymbolsResponse:
        return await self.unary(self.stub.ScoreSymbols, request)


class ImpactClient(PeerClient):
    stub: impact_pb2_grpc.ImpactServiceAsyncStub

    async def compute(
        self, request: impact_pb2.ComputeImpactRequest
    ) -> impact_pb2.ComputeImpactResponse:
        return await self.unary(self.stub.Compute, request)


class AnswerClient(PeerClient):
    stub: answer_pb2_grpc.AnswerServiceAsyncStub

    def generate(self, request: answer_pb2.GenerateRequest) -> PeerStream[answer_pb2.GenerateEvent]:
        return self.stream(self.stub.Generate, request)


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
