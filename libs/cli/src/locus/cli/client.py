"""Every call the CLI makes, through the public Gateway API.

Until a stack runs the gateway, the calls that have a direct equivalent go to IngestionService
or AstService with the same request messages; that fallback lives only in ``_stub_for`` and can
be deleted once every stack has a gateway."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import grpc

from locus.cli.exit_codes import CliError, ExitCode
from locus.rpc import MeshCredentials, make_channel
from locus.rpc.bearer import bearer_interceptors
from locus.telemetry import Telemetry
from locus.v1 import (
    ast_pb2,
    ast_pb2_grpc,
    common_pb2,
    gateway_pb2,
    gateway_pb2_grpc,
    impact_pb2,
    ingestion_pb2,
    ingestion_pb2_grpc,
    retrieval_pb2,
)

DEFAULT_TIMEOUT_SECONDS = 30.0
ASK_TIMEOUT_SECONDS = 600.0
MAX_PAGES = 1000


class AnswerStream(Protocol):
    """A grpc.aio server-streaming call of Gateway.Ask."""

    def __aiter__(self) -> AsyncIterator[gateway_pb2.AskEvent]: ...

    def cancel(self) -> bool: ...


@dataclass(frozen=True)
class Endpoints:
    """Where to send calls: the gateway, or (without one) ingestion and ast directly."""

    gateway: str | None = None
    ingestion: str | None = None
    ast: str | None = None


class LocusClient:
    def __init__(
        self,
        endpoints: Endpoints,
        telemetry: Telemetry | None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        mesh: MeshCredentials | None = None,
        credential: str = "",
    ) -> None:
        self._endpoints = endpoints
        # The caller's API key or token, sent to the gateway only (caller_credential.py).
        self._credential = credential
        self._telemetry = telemetry
        self._timeout = timeout
        # The stack's service token (and mTLS certificate) for ingestion and ast called
        # directly; the gateway gets the certificate only.
        self._mesh = mesh
        self._channels: dict[str, grpc.aio.Channel] = {}

    async def __aenter__(self) -> LocusClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    @property
    def via_gateway(self) -> bool:
        return self._endpoints.gateway is not None

    def _channel(self, address: str) -> grpc.aio.Channel:
        if address not in self._channels:
            mesh = self._mesh
            to_gateway = address == self._endpoints.gateway
            if mesh is not None and to_gateway:
                mesh = mesh.without_token()
            self._channels[address] = make_channel(
                address,
                self._telemetry,
                default_timeout=self._timeout,
                mesh=mesh,
                extra_interceptors=(
                    bearer_interceptors(self._credential) if to_gateway and self._credential else ()
                ),
            )
        return self._channels[address]

    def _stub_for(self, method: str, fallback: str | None = None) -> Any:
        """The Gateway stub, or the stub of ``fallback`` ("ingestion" / "ast") serving the same
        method with the same messages while the stack has no gateway."""
        if self._endpoints.gateway is not None:
            return gateway_pb2_grpc.GatewayStub(self._channel(self._endpoints.gateway))
        if fallback == "ingestion" and self._endpoints.ingestion is not None:
            return ingestion_pb2_grpc.IngestionServiceStub(self._channel(self._endpoints.ingestion))
        if fallback == "ast" and self._endpoints.ast is not None:
            return ast_pb2_grpc.AstServiceStub(self._channel(self._endpoints.ast))
        needed = "the gateway" if fallback is None else f"the gateway or the {fallback} service"
        raise CliError(
            f"{method} needs {needed}, which this stack does not run; "
            "start a stack that includes it (`locus up` starts every installed service)",
            ExitCode.UNAVAILABLE,
        )

    # projects and sources

    async def create_project(
        self, request: ingestion_pb2.CreateProjectRequest
    ) -> ingestion_pb2.Project:
        reply: ingestion_pb2.Project = await self._stub_for(
            "CreateProject", "ingestion"
        ).CreateProject(request)
        return reply

    async def list_projects(self) -> list[ingestion_pb2.Project]:
        stub = self._stub_for("ListProjects", "ingestion")
        projects: list[ingestion_pb2.Project] = []
        token = ""
        for _ in range(MAX_PAGES):
            reply = await stub.ListProjects(
                ingestion_pb2.ListProjectsRequest(page=common_pb2.PageRequest(page_token=token))
            )
            projects.extend(reply.projects)
            token = reply.next_page_token
            if not token:
                break
        return projects

    async def is_scanned(self, project: str) -> bool:
        """Whether a scan of ``project`` has completed (False too when it cannot be read)."""
        try:
            return bool((await self.get_project(project)).latest_snapshot_id)
        except grpc.aio.AioRpcError:
            return False

    async def get_project(self, project: str) -> ingestion_pb2.Project:
        reply: ingestion_pb2.Project = await self._stub_for("GetProject", "ingestion").GetProject(
            ingestion_pb2.GetProjectRequest(project_id=project)
        )
        return reply

    async def delete_project(self, project: str) -> ingestion_pb2.DeleteProjectResponse:
        reply: ingestion_pb2.DeleteProjectResponse = await self._stub_for(
            "DeleteProject", "ingestion"
        ).DeleteProject(ingestion_pb2.DeleteProjectRequest(project_id=project))
        return reply

    def registry_stub(self) -> Any:
        """The stub serving the registry (systems, subsystems, UpdateProject, RemoveSource):
        the gateway's, or ingestion's in a stack without one (registry_commands calls it)."""
        return self._stub_for("the registry", "ingestion")

    # knowledge documents

    async def upsert_knowledge_document(
        self, request: ingestion_pb2.UpsertKnowledgeDocumentRequest
    ) -> ingestion_pb2.UpsertKnowledgeDocumentResponse:
        reply: ingestion_pb2.UpsertKnowledgeDocumentResponse = await self._stub_for(
            "UpsertKnowledgeDocument", "ingestion"
        ).UpsertKnowledgeDocument(request)
        return reply

    async def delete_knowledge_document(
        self, request: ingestion_pb2.DeleteKnowledgeDocumentRequest
    ) -> ingestion_pb2.DeleteKnowledgeDocumentResponse:
        reply: ingestion_pb2.DeleteKnowledgeDocumentResponse = await self._stub_for(
            "DeleteKnowledgeDocument", "ingestion"
        ).DeleteKnowledgeDocument(request)
        return reply

    async def import_chm(
        self, request: ingestion_pb2.ImportChmRequest
    ) -> ingestion_pb2.ImportChmResponse:
        reply: ingestion_pb2.ImportChmResponse = await self._stub_for(
            "ImportChm", "ingestion"
        ).ImportChm(request)
        return reply

    async def add_source(self, request: ingestion_pb2.AddSourceRequest) -> ingestion_pb2.Source:
        reply: ingestion_pb2.Source = await self._stub_for("AddSource", "ingestion").AddSource(
            request
        )
        return reply

    async def list_sources(self, project: str) -> list[ingestion_pb2.Source]:
        reply = await self._stub_for("ListSources", "ingestion").ListSources(
            ingestion_pb2.ListSourcesRequest(project_id=project)
        )
        return list(reply.sources)

    # scans

    async def start_scan(self, project: str) -> ingestion_pb2.ScanJob:
        reply: ingestion_pb2.ScanJob = await self._stub_for("StartScan", "ingestion").StartScan(
            ingestion_pb2.StartScanRequest(project_id=project)
        )
        return reply

    async def get_scan(self, job_id: str) -> ingestion_pb2.ScanJob:
        reply: ingestion_pb2.ScanJob = await self._stub_for("GetScan", "ingestion").GetScan(
            ingestion_pb2.GetScanRequest(job_id=job_id)
        )
        return reply

    # code

    async def find_symbols(
        self, request: ast_pb2.FindSymbolsRequest
    ) -> ast_pb2.FindSymbolsResponse:
        stub = self._stub_for("FindSymbols", "ast")
        if not self.via_gateway:
            # AstService knows project ids only; the gateway resolves names itself.
            project = await self._stub_for("GetProject", "ingestion").GetProject(
                ingestion_pb2.GetProjectRequest(project_id=request.project_id)
            )
            request.project_id = project.project_id
        reply: ast_pb2.FindSymbolsResponse = await stub.FindSymbols(request)
        return reply

    async def get_ast_node(self, request: ast_pb2.GetNodeRequest) -> ast_pb2.GetNodeResponse:
        stub = self._stub_for("GetAstNode", "ast")
        # AstService names the gateway's GetAstNode GetNode (same messages).
        call = stub.GetAstNode if self.via_gateway else stub.GetNode
        reply: ast_pb2.GetNodeResponse = await call(request)
        return reply

    async def search(self, request: retrieval_pb2.SearchRequest) -> retrieval_pb2.SearchResponse:
        reply: retrieval_pb2.SearchResponse = await self._stub_for("Search").Search(request)
        return reply

    async def read_file(self, request: gateway_pb2.ReadFileRequest) -> gateway_pb2.ReadFileResponse:
        reply: gateway_pb2.ReadFileResponse = await self._stub_for("ReadFile").ReadFile(request)
        return reply

    async def get_file_outline(
        self, request: ast_pb2.GetFileOutlineRequest
    ) -> ast_pb2.GetFileOutlineResponse:
        reply: ast_pb2.GetFileOutlineResponse = await self._stub_for(
            "GetFileOutline"
        ).GetFileOutline(request)
        return reply

    async def compute_impact(
        self, request: impact_pb2.ComputeImpactRequest
    ) -> impact_pb2.ComputeImpactResponse:
        reply: impact_pb2.ComputeImpactResponse = await self._stub_for(
            "ComputeImpact"
        ).ComputeImpact(request)
        return reply

    async def locate(self, request: gateway_pb2.LocateRequest) -> gateway_pb2.LocateResponse:
        reply: gateway_pb2.LocateResponse = await self._stub_for("Locate").Locate(request)
        return reply

    def ask(self, request: gateway_pb2.AskRequest) -> AnswerStream:
        """The server stream of one question; cancelling it cancels the answer on the server."""
        call: AnswerStream = self._stub_for("Ask").Ask(request, timeout=ASK_TIMEOUT_SECONDS)
        return call

    # requests and feedback

    async def list_requests(
        self, request: gateway_pb2.ListRequestsRequest
    ) -> list[gateway_pb2.RequestRecord]:
        stub = self._stub_for("ListRequests")
        records: list[gateway_pb2.RequestRecord] = []
        for _ in range(MAX_PAGES):
            reply = await stub.ListRequests(request)
            records.extend(reply.requests)
            if not reply.next_page_token:
                break
            request.page.page_token = reply.next_page_token
        return records

    async def get_request(self, request_id: str) -> gateway_pb2.RequestRecord:
        reply: gateway_pb2.RequestRecord = await self._stub_for("GetRequest").GetRequest(
            gateway_pb2.GetRequestRequest(request_id=request_id)
        )
        return reply

    async def list_feedback(
        self, request: gateway_pb2.ListFeedbackRequest, *, limit: int
    ) -> list[gateway_pb2.FeedbackRecord]:
        """Feedback, newest first, until ``limit`` entries (or the last page)."""
        stub = self._stub_for("ListFeedback")
        found: list[gateway_pb2.FeedbackRecord] = []
        for _ in range(MAX_PAGES):
            reply = await stub.ListFeedback(request)
            found.extend(reply.feedback)
            if not reply.next_page_token or len(found) >= limit:
                break
            request.page.page_token = reply.next_page_token
        return found[:limit]

    async def record_feedback(
        self, request: gateway_pb2.RecordFeedbackRequest
    ) -> gateway_pb2.RecordFeedbackResponse:
        reply: gateway_pb2.RecordFeedbackResponse = await self._stub_for(
            "RecordFeedback"
        ).RecordFeedback(request)
        return reply

    # access

    async def create_api_key(
        self, request: gateway_pb2.CreateApiKeyRequest
    ) -> gateway_pb2.CreateApiKeyResponse:
        reply: gateway_pb2.CreateApiKeyResponse = await self._stub_for("CreateApiKey").CreateApiKey(
            request
        )
        return reply

    async def list_api_keys(
        self, request: gateway_pb2.ListApiKeysRequest
    ) -> list[gateway_pb2.ApiKey]:
        reply: gateway_pb2.ListApiKeysResponse = await self._stub_for("ListApiKeys").ListApiKeys(
            request
        )
        return list(reply.keys)

    async def revoke_api_key(self, request: gateway_pb2.RevokeApiKeyRequest) -> gateway_pb2.ApiKey:
        reply: gateway_pb2.ApiKey = await self._stub_for("RevokeApiKey").RevokeApiKey(request)
        return reply

    async def who_am_i(self) -> gateway_pb2.WhoAmIResponse:
        reply: gateway_pb2.WhoAmIResponse = await self._stub_for("WhoAmI").WhoAmI(
            gateway_pb2.WhoAmIRequest()
        )
        return reply
