"""The public Gateway API over gRPC. Every call is authenticated first (an API key or an OIDC
token) and authorized on the project it names. Project, source and scan calls are delegated to
ingestion, symbol and outline calls to ast (project names resolved to ids first), Search to
retrieval; ReadFile, Locate and Ask run the gateway's own service layer. Questions (locate, ask,
search) pass admission control first, then are recorded with their request id and principal;
domain errors become status codes here."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import grpc
from opentelemetry import trace

from locus.gateway.access_control import MAX_KEY_LIFETIME, AccessControl, ProjectIdentity
from locus.gateway.adapters.peer_clients import DownstreamError, PeerClients
from locus.gateway.adapters.proto_mapping import (
    api_key_message,
    feedback_message,
    grants_of,
    hit_artifact,
    optional_time,
    read_file_response,
    request_details,
    request_record,
    who_am_i,
)
from locus.gateway.admission import AdmissionGate, Overloaded, WaitedTooLong
from locus.gateway.asking import Asker, AskSession
from locus.gateway.domain.access import AccessDenied, NotAuthenticated, Principal, Role
from locus.gateway.domain.errors import (
    FileNotFound,
    GatewayError,
    InvalidRequest,
    LinesOutOfRange,
    ProjectNotScanned,
    RequestIdTaken,
    RequestNotFound,
)
from locus.gateway.domain.file_reading import normalize_file_path
from locus.gateway.domain.requests import (
    FeedbackQuery,
    RequestKind,
    RequestQuery,
    RequestStatus,
    StoredRequest,
)
from locus.gateway.domain.validation import (
    normalize_path_prefix,
    page_size,
    require_id,
    validate_comment,
    validate_rating,
)
from locus.gateway.locating import LocateQuery, Locator, not_scanned_message
from locus.gateway.reading import FileReader
from locus.gateway.request_log import OpenRequest, RequestHistory, RequestJournal
from locus.gateway.scoping import ScopedQuestions, scope_of
from locus.rpc import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    RpcContext,
    ServiceError,
    Unauthenticated,
    Unavailable,
)
from locus.telemetry import REQUEST_ID_HEADER, current_request_id, new_request_id
from locus.v1 import (
    ast_pb2,
    gateway_pb2,
    gateway_pb2_grpc,
    impact_pb2,
    ingestion_pb2,
    retrieval_pb2,
)

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
        if isinstance(error, RequestNotFound | FileNotFound):
            return NotFound(message)
        if isinstance(error, LinesOutOfRange):
            return OutOfRange(message)
        if isinstance(error, ProjectNotScanned):
            return FailedPrecondition(message)
        if isinstance(error, RequestIdTaken):
            return AlreadyExists(message)
        if isinstance(error, AccessDenied):
            return PermissionDenied(message)
        if isinstance(error, NotAuthenticated):
            return Unauthenticated(message)
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
        access: AccessControl,
        files: FileReader,
        scoped: ScopedQuestions,
    ) -> None:
        self._access = access
        self._scoped = scoped
        self._questions = questions  # Locate and Search
        self._answers = answers  # Ask (long: the answer streams)
        self._peers = peers
        self._locator = locator
        self._asker = asker
        self._journal = journal
        self._history = history
        self._files = files

    # delegated to ingestion

    async def CreateProject(
        self, request: ingestion_pb2.CreateProjectRequest, context: RpcContext
    ) -> ingestion_pb2.Project:
        principal = await self._caller(context, "CreateProject")
        async with _mapped_errors():
            await self._access.require_everywhere(
                principal, Role.ADMIN, "creating a project", method="CreateProject"
            )
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.CreateProject, request)

    async def GetProject(
        self, request: ingestion_pb2.GetProjectRequest, context: RpcContext
    ) -> ingestion_pb2.Project:
        await self._project_call(context, "GetProject", Role.READER, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.GetProject, request)

    async def ListProjects(
        self, request: ingestion_pb2.ListProjectsRequest, context: RpcContext
    ) -> ingestion_pb2.ListProjectsResponse:
        principal = await self._caller(context, "ListProjects")
        response = await self._peers.ingestion.unary(
            self._peers.ingestion.stub.ListProjects, request
        )
        if principal.may_everywhere(Role.READER):
            return response
        # A page may hold fewer projects than page_size: those the caller may not see are
        # left out, never hinted at.
        visible = [p for p in response.projects if principal.may(Role.READER, p.project_id, p.name)]
        return ingestion_pb2.ListProjectsResponse(
            projects=visible, next_page_token=response.next_page_token
        )

    async def AddSource(
        self, request: ingestion_pb2.AddSourceRequest, context: RpcContext
    ) -> ingestion_pb2.Source:
        await self._project_call(context, "AddSource", Role.WRITER, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.AddSource, request)

    async def ListSources(
        self, request: ingestion_pb2.ListSourcesRequest, context: RpcContext
    ) -> ingestion_pb2.ListSourcesResponse:
        await self._project_call(context, "ListSources", Role.READER, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.ListSources, request)

    async def StartScan(
        self, request: ingestion_pb2.StartScanRequest, context: RpcContext
    ) -> ingestion_pb2.ScanJob:
        await self._project_call(context, "StartScan", Role.WRITER, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.StartScan, request)

    async def NotifyPush(
        self, request: ingestion_pb2.NotifyPushRequest, context: RpcContext
    ) -> ingestion_pb2.NotifyPushResponse:
        await self._project_call(context, "NotifyPush", Role.WRITER, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.NotifyPush, request)

    async def DeleteProject(
        self, request: ingestion_pb2.DeleteProjectRequest, context: RpcContext
    ) -> ingestion_pb2.DeleteProjectResponse:
        """Admin on the project. Returns once ingestion deleted its part and published
        project.deleted; ast, retrieval and impact retract the project asynchronously."""
        await self._project_call(context, "DeleteProject", Role.ADMIN, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.DeleteProject, request)

    async def UpsertKnowledgeDocument(
        self, request: ingestion_pb2.UpsertKnowledgeDocumentRequest, context: RpcContext
    ) -> ingestion_pb2.UpsertKnowledgeDocumentResponse:
        """Writer on the project; ingestion validates the document (format, size)."""
        await self._project_call(
            context, "UpsertKnowledgeDocument", Role.WRITER, request.project_id
        )
        return await self._peers.ingestion.unary(
            self._peers.ingestion.stub.UpsertKnowledgeDocument, request
        )

    async def DeleteKnowledgeDocument(
        self, request: ingestion_pb2.DeleteKnowledgeDocumentRequest, context: RpcContext
    ) -> ingestion_pb2.DeleteKnowledgeDocumentResponse:
        await self._project_call(
            context, "DeleteKnowledgeDocument", Role.WRITER, request.project_id
        )
        return await self._peers.ingestion.unary(
            self._peers.ingestion.stub.DeleteKnowledgeDocument, request
        )

    async def ImportChm(
        self, request: ingestion_pb2.ImportChmRequest, context: RpcContext
    ) -> ingestion_pb2.ImportChmResponse:
        """Writer on the project; ingestion extracts the package whole before writing."""
        await self._project_call(context, "ImportChm", Role.WRITER, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.ImportChm, request)

    # the registry: reads for any valid credential, writes for a system admin (admin:*)

    async def UpdateProject(
        self, request: ingestion_pb2.UpdateProjectRequest, context: RpcContext
    ) -> ingestion_pb2.Project:
        """Admin on the project: rename it (grants name it by id, so they follow) or move it."""
        await self._project_call(context, "UpdateProject", Role.ADMIN, request.project_id)
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.UpdateProject, request)

    async def CreateSystem(
        self, request: ingestion_pb2.CreateSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        await self._registry_write(context, "CreateSystem", "creating a system")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.CreateSystem, request)

    async def GetSystem(
        self, request: ingestion_pb2.GetSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        await self._caller(context, "GetSystem")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.GetSystem, request)

    async def ListSystems(
        self, request: ingestion_pb2.ListSystemsRequest, context: RpcContext
    ) -> ingestion_pb2.ListSystemsResponse:
        await self._caller(context, "ListSystems")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.ListSystems, request)

    async def UpdateSystem(
        self, request: ingestion_pb2.UpdateSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        await self._registry_write(context, "UpdateSystem", "changing a system")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.UpdateSystem, request)

    async def DeleteSystem(
        self, request: ingestion_pb2.DeleteSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        await self._registry_write(context, "DeleteSystem", "deleting a system")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.DeleteSystem, request)

    async def CreateSubsystem(
        self, request: ingestion_pb2.CreateSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        await self._registry_write(context, "CreateSubsystem", "creating a subsystem")
        return await self._peers.ingestion.unary(
            self._peers.ingestion.stub.CreateSubsystem, request
        )

    async def GetSubsystem(
        self, request: ingestion_pb2.GetSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        await self._caller(context, "GetSubsystem")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.GetSubsystem, request)

    async def ListSubsystems(
        self, request: ingestion_pb2.ListSubsystemsRequest, context: RpcContext
    ) -> ingestion_pb2.ListSubsystemsResponse:
        await self._caller(context, "ListSubsystems")
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.ListSubsystems, request)

    async def UpdateSubsystem(
        self, request: ingestion_pb2.UpdateSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        await self._registry_write(context, "UpdateSubsystem", "changing a subsystem")
        return await self._peers.ingestion.unary(
            self._peers.ingestion.stub.UpdateSubsystem, request
        )

    async def DeleteSubsystem(
        self, request: ingestion_pb2.DeleteSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        await self._registry_write(context, "DeleteSubsystem", "deleting a subsystem")
        return await self._peers.ingestion.unary(
            self._peers.ingestion.stub.DeleteSubsystem, request
        )

    async def _registry_write(self, context: RpcContext, method: str, what: str) -> None:
        principal = await self._caller(context, method)
        async with _mapped_errors():
            await self._access.require_everywhere(principal, Role.ADMIN, what, method=method)

    async def RemoveSource(
        self, request: ingestion_pb2.RemoveSourceRequest, context: RpcContext
    ) -> ingestion_pb2.RemoveSourceResponse:
        """Writer on the source's project. Returns the job that retracts its files."""
        principal = await self._caller(context, "RemoveSource")
        async with _mapped_errors():
            source_id = require_id("source_id", request.source_id)
        async with _mapped_errors():
            await self._access.require_owner(
                principal,
                Role.WRITER,
                lambda: self._peers.ingestion.unary(
                    self._peers.ingestion.stub.GetSource,
                    ingestion_pb2.GetSourceRequest(source_id=source_id),
                ),
                lambda source: str(source.project_id),
                method="RemoveSource",
                shown_as=f"the project of source {source_id}",
            )
        return await self._peers.ingestion.unary(self._peers.ingestion.stub.RemoveSource, request)

    async def GetScan(
        self, request: ingestion_pb2.GetScanRequest, context: RpcContext
    ) -> ingestion_pb2.ScanJob:
        principal = await self._caller(context, "GetScan")
        async with _mapped_errors():
            return await self._access.require_owner(
                principal,
                Role.READER,
                lambda: self._peers.ingestion.unary(self._peers.ingestion.stub.GetScan, request),
                lambda job: str(job.project_id),
                method="GetScan",
                shown_as=f"the project of scan job {request.job_id}",
            )

    # delegated to ast and retrieval

    async def GetAstNode(
        self, request: ast_pb2.GetNodeRequest, context: RpcContext
    ) -> ast_pb2.GetNodeResponse:
        principal = await self._caller(context, "GetAstNode")
        async with _mapped_errors():
            return await self._access.require_owner(
                principal,
                Role.READER,
                lambda: self._peers.ast.unary(self._peers.ast.stub.GetNode, request),
                lambda response: str(response.symbol.location.project_id),
                method="GetAstNode",
                shown_as=f"the project of node {request.node_id}",
            )

    async def FindSymbols(
        self, request: ast_pb2.FindSymbolsRequest, context: RpcContext
    ) -> ast_pb2.FindSymbolsResponse:
        found = await self._project_call(context, "FindSymbols", Role.READER, request.project_id)
        forwarded = ast_pb2.FindSymbolsRequest()
        forwarded.CopyFrom(request)
        async with _mapped_errors():
            # `./src/`, `src\pkg` read as Locate reads them; `..` is refused.
            forwarded.path_prefix = normalize_path_prefix(request.path_prefix)
        project = await self._peers.ingestion.get_project(
            found.project_id if found is not None else request.project_id
        )
        async with _mapped_errors():
            if not project.latest_snapshot_id:
                # As Locate, Search and ReadFile answer it: not an empty list.
                raise ProjectNotScanned(not_scanned_message(project.name))
        forwarded.project_id = project.project_id
        return await self._peers.ast.unary(self._peers.ast.stub.FindSymbols, forwarded)

    async def ComputeImpact(
        self, request: impact_pb2.ComputeImpactRequest, context: RpcContext
    ) -> impact_pb2.ComputeImpactResponse:
        """The impact service's walk from the seeds, within the project the caller may read
        (seeds of another project are unknown there: the walk never leaves the project)."""
        found = await self._project_call(context, "ComputeImpact", Role.READER, request.project_id)
        if not request.seed_node_ids and not request.seed_file_ids:
            raise InvalidArgument(
                "name at least one seed: seed_node_ids (FindSymbols gives a symbol's node id) "
                "or seed_file_ids"
            )
        forwarded = impact_pb2.ComputeImpactRequest()
        forwarded.CopyFrom(request)
        forwarded.project_id = await self._project_id(request.project_id, found)
        return await self._peers.impact.compute(forwarded)

    # code

    async def ReadFile(
        self, request: gateway_pb2.ReadFileRequest, context: RpcContext
    ) -> gateway_pb2.ReadFileResponse:
        await self._project_call(context, "ReadFile", Role.READER, request.project_id)
        async with _mapped_errors():
            excerpt = await self._files.read(
                request.project_id,
                relative_path=request.relative_path,
                file_id=request.file_id,
                start_line=request.start_line,
                end_line=request.end_line,
            )
        return read_file_response(excerpt)

    async def GetFileOutline(
        self, request: ast_pb2.GetFileOutlineRequest, context: RpcContext
    ) -> ast_pb2.GetFileOutlineResponse:
        found = await self._project_call(context, "GetFileOutline", Role.READER, request.project_id)
        async with _mapped_errors():
            forwarded = ast_pb2.GetFileOutlineRequest()
            forwarded.CopyFrom(request)
            if request.relative_path.strip():
                forwarded.relative_path = normalize_file_path(request.relative_path)
            elif not request.file_id.strip():
                raise InvalidRequest("give the file's relative_path (or its file_id)")
        forwarded.project_id = await self._project_id(request.project_id, found)
        async with _mapped_errors():
            try:
                return await self._peers.ast.get_file_outline(forwarded)
            except DownstreamError as error:
                if error.code != grpc.StatusCode.NOT_FOUND:
                    raise
                # The ast service knows the project by its id; the caller named it.
                wanted = (
                    f"file at {forwarded.relative_path!r}"
                    if forwarded.relative_path
                    else f"file {request.file_id!r}"
                )
                raise FileNotFound(
                    f"project {request.project_id.strip()!r} has no {wanted}: not scanned yet, "
                    "deleted, or not a file of this project"
                ) from None

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: RpcContext
    ) -> retrieval_pb2.SearchResponse:
        principal = await self._caller(context, "Search")
        async with self._admitted(self._questions) as waited:
            return await self._search(principal, request, context, waited)

    async def _search(
        self,
        principal: Principal,
        request: retrieval_pb2.SearchRequest,
        context: RpcContext,
        waited: float,
    ) -> retrieval_pb2.SearchResponse:
        async with _mapped_errors():
            scope = scope_of(request.scope)
            # `./src/`, `src\pkg` read as Locate reads them; `..` is refused.
            prefix = normalize_path_prefix(request.filters.path_prefix)
        if prefix != request.filters.path_prefix:
            normalized = retrieval_pb2.SearchRequest()
            normalized.CopyFrom(request)
            normalized.filters.path_prefix = prefix
            request = normalized
        entry = await self._open(
            RequestKind.SEARCH,
            scope.describe() if scope.given else request.filters.project_id,
            request.query,
            context,
            principal,
            waited,
        )
        async with self._recording(entry):
            if scope.given:
                if request.filters.project_id:
                    raise InvalidRequest("give filters.project_id or scope, not both")
                projects = await self._scoped.resolve(
                    principal, scope, method="Search", entry=entry
                )
                with entry.timed("search"):
                    response = await self._scoped.search(request, projects, entry)
                await self._journal.add_artifacts(
                    entry, [hit_artifact(i, hit) for i, hit in enumerate(response.hits)]
                )
                await self._journal.close(entry, RequestStatus.COMPLETED)
                return response
            if request.filters.project_id:
                await self._access.require_project(
                    principal, Role.READER, request.filters.project_id, method="Search"
                )
            else:
                await self._access.require_everywhere(
                    principal,
                    Role.READER,
                    "searching every project (no filters.project_id)",
                    method="Search",
                )
            forwarded = retrieval_pb2.SearchRequest()
            forwarded.CopyFrom(request)
            if request.filters.project_id:
                with entry.timed("resolve_project"):
                    project = await self._peers.ingestion.get_project(request.filters.project_id)
                entry.project_id, entry.project_name = project.project_id, project.name
                entry.snapshot_id = project.latest_snapshot_id
                if not project.latest_snapshot_id:
                    # By its name and with the scan to run, as Locate says it.
                    raise ProjectNotScanned(not_scanned_message(project.name))
                forwarded.filters.project_id = project.project_id
            with entry.timed("search"):
                response = await self._peers.retrieval.search(forwarded)
            await self._journal.add_artifacts(
                entry, [hit_artifact(i, hit) for i, hit in enumerate(response.hits)]
            )
            await self._journal.close(entry, RequestStatus.COMPLETED)
            return response

    # the gateway's own

    async def Locate(
        self, request: gateway_pb2.LocateRequest, context: RpcContext
    ) -> gateway_pb2.LocateResponse:
        principal = await self._caller(context, "Locate")
        async with self._admitted(self._questions) as waited:
            return await self._locate(principal, request, context, waited)

    async def _locate(
        self,
        principal: Principal,
        request: gateway_pb2.LocateRequest,
        context: RpcContext,
        waited: float,
    ) -> gateway_pb2.LocateResponse:
        async with _mapped_errors():
            scope = scope_of(request.scope)
        entry = await self._open(
            RequestKind.LOCATE,
            scope.describe() if scope.given else request.project_id,
            request.question,
            context,
            principal,
            waited,
        )
        async with self._recording(entry):
            query = LocateQuery(
                project_ref=request.project_id,
                question=request.question,
                max_files=request.max_files,
                max_symbols=request.max_symbols,
                path_prefix=request.path_prefix,
                include_tests=request.include_tests,
                impact_depth=request.impact_depth,
                include_candidates=request.include_candidates,
            )
            if scope.given:
                if request.project_id.strip():
                    raise InvalidRequest("give project_id or scope, not both")
                projects = await self._scoped.resolve(
                    principal, scope, method="Locate", entry=entry
                )
                scoped = await self._scoped.locate(query, projects, entry)
                await self._journal.add_artifacts(
                    entry, [hit_artifact(i, hit) for i, hit in enumerate(scoped.hits)]
                )
                await self._journal.close(
                    entry, RequestStatus.COMPLETED, response=scoped.response.SerializeToString()
                )
                return scoped.response
            await self._project_access(principal, "Locate", Role.READER, request.project_id)
            located = await self._locator.locate(query, entry)
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

    async def Ask(
        self, request: gateway_pb2.AskRequest, context: RpcContext
    ) -> AsyncIterator[gateway_pb2.AskEvent]:
        principal = await self._caller(context, "Ask")
        async with self._admitted(self._answers) as waited:
            async with _mapped_errors():
                scope = scope_of(request.scope)
            entry = await self._open(
                RequestKind.ASK,
                scope.describe() if scope.given else request.project_id,
                request.question,
                context,
                principal,
                waited,
            )
            session = AskSession(entry)
            # However the client goes away, the answer stream (and its LLM request) stops at once.
            # types-grpcio declares the callback a class no function matches.
            context.add_done_callback(lambda _: session.cancel())  # type: ignore[arg-type]
            async with self._recording(entry):
                if scope.given:
                    if request.project_id.strip():
                        raise InvalidRequest("give project_id or scope, not both")
                    projects = await self._scoped.resolve(
                        principal, scope, method="Ask", entry=entry
                    )
                    scoped = await self._scoped.locate(
                        LocateQuery(project_ref="", question=request.question), projects, entry
                    )
                    events = self._asker.ask_scoped(scoped, request.max_context_chunks, session)
                else:
                    await self._project_access(principal, "Ask", Role.READER, request.project_id)
                    events = self._asker.ask(
                        request.project_id, request.question, request.max_context_chunks, session
                    )
                async with contextlib.aclosing(events):
                    async for event in events:
                        yield event

    async def ListRequests(
        self, request: gateway_pb2.ListRequestsRequest, context: RpcContext
    ) -> gateway_pb2.ListRequestsResponse:
        principal = await self._caller(context, "ListRequests")
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
                # A principal sees its own requests; a system admin everyone's.
                principal="" if principal.is_system_admin else principal.subject,
                status=status,
                start=optional_time(request.time_range, "start"),
                end=optional_time(request.time_range, "end"),
                page_size=page_size(request.page.page_size, default=DEFAULT_PAGE, limit=MAX_PAGE),
                page_token=request.page.page_token,
            )
            page, citations = await self._history.list(query)
        return gateway_pb2.ListRequestsResponse(
            requests=[request_record(r, citations.get(r.request_id, [])) for r in page.requests],
            next_page_token=page.next_page_token,
        )

    async def GetRequest(
        self, request: gateway_pb2.GetRequestRequest, context: RpcContext
    ) -> gateway_pb2.RequestRecord:
        principal = await self._caller(context, "GetRequest")
        async with _mapped_errors():
            details = await self._history.details(request.request_id)
            await self._own_request(principal, "GetRequest", details.request)
        return request_details(details)

    async def RecordFeedback(
        self, request: gateway_pb2.RecordFeedbackRequest, context: RpcContext
    ) -> gateway_pb2.RecordFeedbackResponse:
        principal = await self._caller(context, "RecordFeedback")
        async with _mapped_errors():
            validate_rating(request.rating)  # a bad value is refused before any lookup
            validate_comment(request.comment)
            stored, _ = await self._history.get(request.request_id)
            await self._own_request(principal, "RecordFeedback", stored)
            feedback = await self._history.record_feedback(
                request.request_id, request.rating, request.comment
            )
        return gateway_pb2.RecordFeedbackResponse(feedback_id=feedback.feedback_id)

    async def ListFeedback(
        self, request: gateway_pb2.ListFeedbackRequest, context: RpcContext
    ) -> gateway_pb2.ListFeedbackResponse:
        principal = await self._caller(context, "ListFeedback")
        async with _mapped_errors():
            request_id = request.request_id.strip()
            if request_id:
                stored, _ = await self._history.get(request_id)
                await self._own_request(principal, "ListFeedback", stored)
            page = await self._history.list_feedback(
                FeedbackQuery(
                    request_id=request_id,
                    project=request.project_id.strip(),
                    # Feedback on the principal's own requests; a system admin sees all.
                    principal="" if principal.is_system_admin else principal.subject,
                    page_size=page_size(
                        request.page.page_size, default=DEFAULT_PAGE, limit=MAX_PAGE
                    ),
                    page_token=request.page.page_token,
                )
            )
        return gateway_pb2.ListFeedbackResponse(
            feedback=[feedback_message(f) for f in page.feedback],
            next_page_token=page.next_page_token,
        )

    # access

    async def CreateApiKey(
        self, request: gateway_pb2.CreateApiKeyRequest, context: RpcContext
    ) -> gateway_pb2.CreateApiKeyResponse:
        principal = await self._caller(context, "CreateApiKey")
        async with _mapped_errors():
            if not 0 <= request.expires_in_seconds <= MAX_KEY_LIFETIME.total_seconds():
                raise InvalidRequest(
                    "expires_in_seconds must be between 1 and "
                    f"{int(MAX_KEY_LIFETIME.total_seconds())} (ten years), or 0 for never"
                )
            key, credential = await self._access.create_key(
                principal,
                name=request.name,
                owner=request.owner,
                grants=grants_of(request.grants),
                expires_in=(
                    timedelta(seconds=request.expires_in_seconds)
                    if request.expires_in_seconds
                    else None
                ),
                method="CreateApiKey",
            )
        return gateway_pb2.CreateApiKeyResponse(key=api_key_message(key), api_key=credential)

    async def ListApiKeys(
        self, request: gateway_pb2.ListApiKeysRequest, context: RpcContext
    ) -> gateway_pb2.ListApiKeysResponse:
        principal = await self._caller(context, "ListApiKeys")
        keys = await self._access.list_keys(principal, include_revoked=request.include_revoked)
        return gateway_pb2.ListApiKeysResponse(keys=[api_key_message(k) for k in keys])

    async def RevokeApiKey(
        self, request: gateway_pb2.RevokeApiKeyRequest, context: RpcContext
    ) -> gateway_pb2.ApiKey:
        principal = await self._caller(context, "RevokeApiKey")
        async with _mapped_errors():
            key_id = require_id("key_id", request.key_id)
            revoked = await self._access.revoke_key(principal, key_id, method="RevokeApiKey")
        return api_key_message(revoked)

    async def WhoAmI(
        self, request: gateway_pb2.WhoAmIRequest, context: RpcContext
    ) -> gateway_pb2.WhoAmIResponse:
        return who_am_i(await self._caller(context, "WhoAmI"))

    async def _caller(self, context: RpcContext, method: str) -> Principal:
        """The authenticated principal of this call; UNAUTHENTICATED (logged and audited)
        without a valid credential."""
        metadata = {
            key: value
            for key, value in (context.invocation_metadata() or ())
            if isinstance(value, str)
        }
        try:
            return await self._access.authenticate(metadata)
        except NotAuthenticated as error:
            await self._access.refused(None, method, error)
            raise Unauthenticated(str(error)) from None

    async def _project_call(
        self, context: RpcContext, method: str, role: Role, project_ref: str
    ) -> ProjectIdentity | None:
        """Authenticate the caller and check its ``role`` on the project; the project when the
        check had to look it up (None for a caller with that role everywhere)."""
        principal = await self._caller(context, method)
        async with _mapped_errors():
            return await self._project_access(principal, method, role, project_ref)

    async def _project_access(
        self, principal: Principal, method: str, role: Role, project_ref: str
    ) -> ProjectIdentity | None:
        if not project_ref.strip():
            raise InvalidRequest("project_id must name a project (its id or name)")
        return await self._access.require_project(principal, role, project_ref, method=method)

    async def _project_id(self, project_ref: str, found: ProjectIdentity | None) -> str:
        """The id of the project ``project_ref`` names: the one the access check found, else
        looked up now."""
        if found is not None:
            return found.project_id
        return str((await self._peers.ingestion.get_project(project_ref)).project_id)

    async def _own_request(self, principal: Principal, method: str, stored: StoredRequest) -> None:
        """Pass for the principal that made the request, or a system admin."""
        if principal.is_system_admin or stored.principal == principal.subject:
            return
        error = AccessDenied(
            f"request {stored.request_id} was made by another principal; {principal.subject} "
            "sees only its own requests (a system admin, admin:*, sees every request)",
            scope=stored.request_id,
        )
        await self._access.refused(principal, method, error)
        raise error

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
        context: RpcContext,
        principal: Principal,
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
            principal=principal.subject,
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
            status = (
                RequestStatus.DENIED if isinstance(error, AccessDenied) else RequestStatus.FAILED
            )
            await self._close_unfinished(entry, status, code, message)
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
