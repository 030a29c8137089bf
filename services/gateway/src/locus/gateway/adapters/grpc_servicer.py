"""The public Gateway API over gRPC. Project, source and scan calls are delegated to ingestion,
symbol calls to ast (project names resolved to ids first), Search to retrieval; Locate and Ask
run the gateway's own service layer. Questions (locate, ask, search) pass admission control
first, then are recorded with their request id; domain errors become status codes here."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
from opentelemetry import trace

from locus.gateway.adapters.peer_clients import PeerClients
from locus.gateway.adapters.proto_mapping import hit_artifact, optional_time, request_record
from locus.gateway.admission import AdmissionGate, Overloaded, WaitedTooLong
from locus.gateway.asking import Asker, AskSession
from locus.gateway.domain.errors import (
    GatewayError,
    InvalidRequest,
    ProjectNotScanned,
    RequestIdTaken,
    RequestNotFound,
)
from locus.gateway.domain.requests import RequestKind, RequestQuery, RequestStatus
from locus.gateway.domain.validation import bounded_count
from locus.gateway.locating import LocateQuery, Locator
from locus.gateway.request_log import OpenRequest, RequestHistory, RequestJournal
from locus.rpc import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    ServiceError,
    Unavailable,
)
from locus.telemetry import REQUEST_ID_HEADER, current_request_id, new_request_id
from locus.v1 import ast_pb2, gateway_pb2, gateway_pb2_grpc, retrieval_pb2

DEFAULT_PAGE = 50
MAX_PAGE = 500


def as_service_error(error: BaseException) -> ServiceError | None:
    """The status a failure maps to; None for a bug (the server turns it into INTERNAL)."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, GatewayError):
        message = str(error)
        if isinstance(error, InvalidRequest):
            return InvalidArgument(message)
        if isinstance(error, RequestNotFound):
            return NotFound(message)
        if isinstance(error, ProjectNotScanned):
            return FailedPrecondition(message)
        if isinstance(error, RequestIdTaken):
            return AlreadyExists(message)
    return None


class GatewayServicer(gateway_pb2_grpc.GatewayServicer):
    def __init__(
        self,
        peers: PeerClients,
        locator: Locator,
        asker: Asker,
        journal: RequestJournal,
        history: RequestHistory,
        questions: AdmissionGate,
        answers: AdmissionGate,
    ) -> None:
        self._questions = questions  # Locate and Search
        self._answers = answers  # Ask (long: the answer streams)
        self._peers = peers
        self._locator = locator
        self._asker = asker
        self._journal = journal
        self._history = history

    # delegated to ingestion

    async def CreateProject(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("CreateProject", request)

    async def GetProject(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("GetProject", request)

    async def ListProjects(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("ListProjects", request)

    async def AddSource(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("AddSource", request)

    async def ListSources(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("ListSources", request)

    async def StartScan(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("StartScan", request)

    async def GetScan(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ingestion.call("GetScan", request)

    # delegated to ast and retrieval

    async def GetAstNode(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await self._peers.ast.call("GetNode", request)

    async def FindSymbols(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        project = await self._peers.ingestion.get_project(request.project_id)
        forwarded = ast_pb2.FindSymbolsRequest()
        forwarded.CopyFrom(request)
        forwarded.project_id = project.project_id
        return await self._peers.ast.call("FindSymbols", forwarded)

    async def Search(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        async with self._admitted(self._questions) as waited:
            return await self._search(request, context, waited)

    async def _search(self, request: Any, context: grpc.aio.ServicerContext, waited: float) -> Any:
        entry = await self._open(
            RequestKind.SEARCH, request.filters.project_id, request.query, context, waited
        )
        async with self._recording(entry):
            forwarded = retrieval_pb2.SearchRequest()
            forwarded.CopyFrom(request)
            if request.filters.project_id:
                with entry.timed("resolve_project"):
                    project = await self._peers.ingestion.get_project(request.filters.project_id)
                entry.project_id, entry.project_name = project.project_id, project.name
                entry.snapshot_id = project.latest_snapshot_id
                forwarded.filters.project_id = project.project_id
            with entry.timed("search"):
                response = await self._peers.retrieval.search(forwarded)
            await self._journal.add_artifacts(
                entry, [hit_artifact(i, hit) for i, hit in enumerate(response.hits)]
            )
            await self._journal.close(entry, RequestStatus.COMPLETED)
            return response

    # the gateway's own

    async def Locate(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        async with self._admitted(self._questions) as waited:
            return await self._locate(request, context, waited)

    async def _locate(self, request: Any, context: grpc.aio.ServicerContext, waited: float) -> Any:
        entry = await self._open(
            RequestKind.LOCATE, request.project_id, request.question, context, waited
        )
        async with self._recording(entry):
            located = await self._locator.locate(
                LocateQuery(
                    project_ref=request.project_id,
                    question=request.question,
                    max_files=request.max_files,
                    max_symbols=request.max_symbols,
                    path_prefix=request.path_prefix,
                    include_tests=request.include_tests,
                    impact_depth=request.impact_depth,
                    include_candidates=request.include_candidates,
                ),
                entry,
            )
            await self._journal.add_artifacts(
                entry, [hit_artifact(i, hit) for i, hit in enumerate(located.hits)]
            )
            stored = located.response
            if stored.candidates_json:  # a training dump is not worth keeping in the journal
                stored = type(stored)()
                stored.CopyFrom(located.response)
                stored.ClearField("candidates_json")
            await self._journal.close(
                entry, RequestStatus.COMPLETED, response=stored.SerializeToString()
            )
            return located.response

    async def Ask(self, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async with self._admitted(self._answers) as waited:
            entry = await self._open(
                RequestKind.ASK, request.project_id, request.question, context, waited
            )
            session = AskSession(entry)
            # However the client goes away, the answer stream (and its LLM request) stops at once.
            context.add_done_callback(lambda _: session.cancel())
            async with self._recording(entry):
                async for event in self._asker.ask(
                    request.project_id, request.question, request.max_context_chunks, session
                ):
                    yield event

    async def ListRequests(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        async with _mapped_errors():
            status = None
            if request.status:
                try:
                    status = RequestStatus(request.status.strip().lower())
                except ValueError:
                    choices = ", ".join(s.value for s in RequestStatus)
                    raise InvalidRequest(
                        f"status {request.status!r} is not one of: {choices}"
                    ) from None
            query = RequestQuery(
                project=request.project_id.strip(),
                status=status,
                start=optional_time(request.time_range, "start"),
                end=optional_time(request.time_range, "end"),
                page_size=bounded_count(
                    "page.page_size", request.page.page_size, default=DEFAULT_PAGE, limit=MAX_PAGE
                ),
                page_token=request.page.page_token,
            )
            page, citations = await self._history.list(query)
        return gateway_pb2.ListRequestsResponse(
            requests=[request_record(r, citations.get(r.request_id, [])) for r in page.requests],
            next_page_token=page.next_page_token,
        )

    async def GetRequest(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        async with _mapped_errors():
            stored, citations = await self._history.get(request.request_id)
        return request_record(stored, citations)

    async def RecordFeedback(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        async with _mapped_errors():
            feedback = await self._history.record_feedback(
                request.request_id, request.rating, request.comment
            )
        return gateway_pb2.RecordFeedbackResponse(feedback_id=feedback.feedback_id)

    # recording

    @asynccontextmanager
    async def _admitted(self, gate: AdmissionGate) -> AsyncIterator[float]:
        """A slot of ``gate`` for the body (yields the seconds waited); shed questions fail at
        once with RESOURCE_EXHAUSTED, or UNAVAILABLE after waiting their longest."""
        try:
            async with gate.admitted() as waited:
                yield waited
        except Overloaded as error:
            raise ResourceExhausted(str(error)) from error
        except WaitedTooLong as error:
            raise Unavailable(str(error)) from error

    async def _open(
        self,
        kind: RequestKind,
        project_ref: str,
        question: str,
        context: grpc.aio.ServicerContext,
        waited_seconds: float = 0.0,
    ) -> OpenRequest:
        request_id = current_request_id() or new_request_id()
        span_context = trace.get_current_span().get_span_context()
        entry = await self._journal.open(
            kind,
            project_ref,
            question,
            request_id=request_id,
            trace_id=format(span_context.trace_id, "032x") if span_context.is_valid else "",
        )
        entry.timings_ms["admission"] = round(waited_seconds * 1000, 2)
        if entry.request_id != request_id:
            context.set_trailing_metadata(((REQUEST_ID_HEADER, entry.request_id),))
        return entry

    @asynccontextmanager
    async def _recording(self, entry: OpenRequest) -> AsyncIterator[None]:
        """Record how a request that did not record its own outcome ended, and map its error."""
        try:
            yield
        except asyncio.CancelledError:
            await self._close_unfinished(
                entry, RequestStatus.CANCELLED, "CANCELLED", "cancelled by the client"
            )
            raise
        except Exception as error:
            service_error = as_service_error(error)
            if service_error is not None:
                code, message = service_error.code.name, service_error.message
            else:
                code, message = "INTERNAL", f"{type(error).__name__}: {error}"
            await self._close_unfinished(entry, RequestStatus.FAILED, code, message)
            if service_error is None or service_error is error:
                raise
            raise service_error from error

    async def _close_unfinished(
        self, entry: OpenRequest, status: RequestStatus, code: str, message: str
    ) -> None:
        # A failed record is logged by the journal; the original error matters more.
        with contextlib.suppress(Exception):
            await self._journal.close(entry, status, error_code=code, error_message=message)


@asynccontextmanager
async def _mapped_errors() -> AsyncIterator[None]:
    try:
        yield
    except GatewayError as error:
        mapped = as_service_error(error)
        if mapped is None:
            raise
        raise mapped from error
