"""The MCP tools: each call is a span (``mcp.tool <name>``) with one request ID that every
gateway call it makes carries, the caller's credential on each of those calls, and a gateway
failure turned into a tool error that carries the gateway's status and message (e.g.
``PERMISSION_DENIED: …``). Every result names the project of each of its items: the names a
scoped reply gives, else one GetProject per project, once per call."""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at runtime.
import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field

from locus.mcp.adapters import proto_mapping
from locus.mcp.adapters.gateway_client import GatewayClient, GatewayError
from locus.mcp.domain import (
    AnswerResult,
    FileLines,
    FoundSymbols,
    ImpactResult,
    LocateResult,
    ProjectList,
    ProjectSummary,
    QuestionScope,
    SearchResult,
    SymbolDetails,
    SymbolImpact,
    SymbolSummary,
    label_projects,
    unnamed_project_ids,
)
from locus.rpc.bearer import AUTHORIZATION
from locus.telemetry import (
    REQUEST_ID_HEADER,
    current_request_id,
    new_request_id,
    with_request_id,
)
from locus.telemetry.request_id import is_valid_request_id
from locus.v1 import ast_pb2, common_pb2, gateway_pb2, impact_pb2, ingestion_pb2, retrieval_pb2

Labelled = TypeVar("Labelled", bound=BaseModel)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
MAX_PROJECT_PAGES = 20
MAX_PARENTS = 16
SEARCH_TEXT_CHARS = 2_000
SEARCH_MODES = {
    "hybrid": retrieval_pb2.SEARCH_MODE_HYBRID,
    "bm25": retrieval_pb2.SEARCH_MODE_BM25,
    "vector": retrieval_pb2.SEARCH_MODE_VECTOR,
}

Project = Annotated[str, Field(min_length=1, description="project name or id (see list_projects)")]
Question = Annotated[
    str, Field(min_length=1, description="a question, bug report or stack trace, in plain words")
]
PathPrefix = Annotated[str, Field(description="only files under this path (e.g. 'src/')")]
ProjectOrScope = Annotated[
    str, Field(description="project name or id (see list_projects); or give scope instead")
]
ScopeField = Annotated[
    QuestionScope | None,
    Field(
        description="instead of project: several projects (projects), every project of a "
        "subsystem (subsystem, with system when named) or of a system (system); results name "
        "their project"
    ),
]


def _target(project: str, scope: QuestionScope | None) -> tuple[str, common_pb2.Scope | None]:
    """The project_id and scope of a question: exactly one of them."""
    if scope is not None and not (scope.projects or scope.subsystem or scope.system):
        raise ToolError(
            "INVALID_ARGUMENT: scope names nothing; give its projects, subsystem or system"
        )
    if (scope is None) == (not project.strip()):
        raise ToolError("INVALID_ARGUMENT: give project or scope, exactly one of them")
    return project, proto_mapping.scope_message(scope)


@dataclass(frozen=True)
class ToolLimits:
    max_read_lines: int
    max_read_chars: int
    max_relations: int


@dataclass(frozen=True)
class CredentialSource:
    """Whose credential a tool call carries. Over HTTP (the request has headers): the request's
    own ``Authorization`` header, as it came, or none; never ``stdio_credential``. Over stdio:
    ``stdio_credential``, the one the server was started with."""

    stdio_credential: str = ""

    def for_call(self, headers: Mapping[str, str] | None) -> str:
        if headers is None:
            return self.stdio_credential
        return headers.get(AUTHORIZATION, "")


def _request_id(headers: Mapping[str, str] | None) -> str:
    """The caller's ``x-request-id`` header or trace baggage when valid, else a new one."""
    for candidate in ((headers or {}).get(REQUEST_ID_HEADER, ""), current_request_id() or ""):
        if candidate and is_valid_request_id(candidate):
            return candidate
    return new_request_id()


def _headers(ctx: Context) -> Mapping[str, str] | None:  # type: ignore[type-arg]
    try:
        return ctx.headers
    except ValueError:  # no request context: a call made outside a session
        return None


class LocusTools:
    def __init__(
        self,
        gateway: GatewayClient,
        tracer: trace.Tracer,
        credentials: CredentialSource,
        limits: ToolLimits,
    ) -> None:
        self._gateway = gateway
        self._tracer = tracer
        self._credentials = credentials
        self._limits = limits

    @asynccontextmanager
    async def _call(
        self,
        name: str,
        ctx: Context,
        **attributes: str | int | bool,  # type: ignore[type-arg]
    ) -> AsyncIterator[str]:
        """One tool call: its span and request ID around the body, which gets the credential."""
        headers = _headers(ctx)
        with (
            with_request_id(_request_id(headers)),
            self._tracer.start_as_current_span(
                f"mcp.tool {name}",
                attributes={
                    "mcp.tool.name": name,
                    **{f"mcp.tool.{k}": v for k, v in attributes.items()},
                },
            ) as span,
        ):
            try:
                yield self._credentials.for_call(headers)
            except GatewayError as error:
                span.set_attribute("rpc.grpc.status", error.code)
                span.set_status(Status(StatusCode.ERROR, error.code))
                raise ToolError(str(error)) from None

    async def _labelled(
        self,
        credential: str,
        result: Labelled,
        *,
        asked_project: str = "",
        names: Mapping[str, str] | None = None,
    ) -> Labelled:
        """``result`` with each item's project id and name. ``asked_project``: the project of a
        one-project call (name or id), looked up once for both; ``names``: what a scoped reply
        gave; any other project of the result is looked up once."""
        known = dict(names or {})
        asked_id = ""
        if asked_project:
            asked_id, known[asked_id] = await self._project(credential, asked_project)
        missing = sorted(unnamed_project_ids(result, known))
        found = await asyncio.gather(*(self._project(credential, id_) for id_ in missing))
        known.update((id_, name) for id_, (_, name) in zip(missing, found, strict=True))
        label_projects(result, known, asked_id)
        return result

    async def _project(self, credential: str, reference: str) -> tuple[str, str]:
        """(id, name) of a project given by id or name; ("", "") when the lookup fails: a
        label is not worth failing a result the gateway already gave."""
        try:
            project = await self._gateway.get_project(
                credential, ingestion_pb2.GetProjectRequest(project_id=reference)
            )
        except GatewayError:
            return "", ""
        return project.project_id, project.name

    def register(self, server: MCPServer) -> None:
        for tool in (
            self.list_projects,
            self.locate,
            self.impact,
            self.symbol_impact,
            self.search,
            self.find_symbols,
            self.get_symbol,
            self.read_file,
            self.ask,
        ):
            server.add_tool(tool, annotations=READ_ONLY, structured_output=True)

    async def list_projects(self, ctx: Context) -> ProjectList:  # type: ignore[type-arg]
        """The projects the caller may read: name, id and whether a scan completed."""
        async with self._call("list_projects", ctx) as credential:
            projects: list[ProjectSummary] = []
            page_token = ""
            for _ in range(MAX_PROJECT_PAGES):
                reply = await self._gateway.list_projects(
                    credential,
                    ingestion_pb2.ListProjectsRequest(
                        page=common_pb2.PageRequest(page_token=page_token)
                    ),
                )
                projects.extend(proto_mapping.project_summary(p) for p in reply.projects)
                page_token = reply.next_page_token
                if not page_token:
                    break
            return ProjectList(projects=projects)

    async def locate(
        self,
        question: Question,
        ctx: Context,  # type: ignore[type-arg]
        project: ProjectOrScope = "",
        scope: ScopeField = None,
        max_files: Annotated[int, Field(ge=1, le=50)] = 10,
        max_symbols: Annotated[int, Field(ge=1, le=100)] = 10,
        path_prefix: PathPrefix = "",
        include_tests: Annotated[bool, Field(description="rank test files too")] = False,
    ) -> LocateResult:
        """Find the files and symbols (functions, classes, methods) that a question, bug report
        or stack trace is about, ranked, with the evidence for each (in one project, or in
        every project of a scope); each names its project."""
        async with self._call("locate", ctx, project=project) as credential:
            project_id, scope_message = _target(project, scope)
            reply = await self._gateway.locate(
                credential,
                gateway_pb2.LocateRequest(
                    project_id=project_id,
                    scope=scope_message,
                    question=question,
                    max_files=max_files,
                    max_symbols=max_symbols,
                    path_prefix=path_prefix,
                    include_tests=include_tests,
                ),
            )
            return await self._labelled(
                credential,
                proto_mapping.locate_result(reply),
                asked_project=project_id,
                names=proto_mapping.located_project_names(reply),
            )

    async def impact(
        self,
        question: Question,
        ctx: Context,  # type: ignore[type-arg]
        project: ProjectOrScope = "",
        scope: ScopeField = None,
        depth: Annotated[int, Field(ge=1, le=5, description="hops through calls/imports")] = 2,
        path_prefix: PathPrefix = "",
    ) -> ImpactResult:
        """What a change to the code a question points at could affect: the located symbols,
        then the symbols and files that depend on them, by distance. Per project (the one
        project, or each project of a scope, walked alone), each labelled."""
        async with self._call("impact", ctx, project=project) as credential:
            project_id, scope_message = _target(project, scope)
            reply = await self._gateway.locate(
                credential,
                gateway_pb2.LocateRequest(
                    project_id=project_id,
                    scope=scope_message,
                    question=question,
                    path_prefix=path_prefix,
                    impact_depth=depth,
                ),
            )
            return await self._labelled(
                credential,
                proto_mapping.impact_result(reply),
                asked_project=project_id,
                names=proto_mapping.located_project_names(reply),
            )

    async def search(
        self,
        query: Annotated[str, Field(min_length=1, description="words or code to find")],
        ctx: Context,  # type: ignore[type-arg]
        project: ProjectOrScope = "",
        scope: ScopeField = None,
        top_k: Annotated[int, Field(ge=1, le=50)] = 10,
        mode: Literal["hybrid", "bm25", "vector"] = "hybrid",
        path_prefix: PathPrefix = "",
    ) -> SearchResult:
        """Full-text (BM25) and semantic search over the code chunks of a project (or of every
        project of a scope); each hit names its project."""
        async with self._call("search", ctx, project=project) as credential:
            project_id, scope_message = _target(project, scope)
            reply = await self._gateway.search(
                credential,
                retrieval_pb2.SearchRequest(
                    query=query,
                    mode=SEARCH_MODES[mode],
                    top_k=top_k,
                    filters=retrieval_pb2.SearchFilters(
                        project_id=project_id, path_prefix=path_prefix
                    ),
                    scope=scope_message,
                ),
            )
            hits = proto_mapping.search_hits(reply, SEARCH_TEXT_CHARS)
            answered = {value: name for name, value in SEARCH_MODES.items()}.get(reply.mode, mode)
            note = ""
            if not hits and mode == "vector":
                note = (
                    "vector mode searches embedded chunks only: vectors come after a scan from "
                    "a retrieval service whose vectors lane is on; try mode bm25 or hybrid"
                )
            return await self._labelled(
                credential,
                SearchResult(
                    request_id=current_request_id() or "",
                    mode=answered,
                    hits=hits,
                    note=note,
                ),
                asked_project=project_id,
            )

    async def find_symbols(
        self,
        project: Project,
        name: Annotated[
            str, Field(min_length=1, description="name or qualified name, or part of one")
        ],
        ctx: Context,  # type: ignore[type-arg]
        kind: Annotated[
            str, Field(description="module, class, function, method, ... ('' = any)")
        ] = "",
        path_prefix: PathPrefix = "",
        exact: Annotated[
            bool,
            Field(
                description="the whole name must match: a name, a qualified name or its end "
                "after a separator (Session.send)"
            ),
        ] = False,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        page_token: Annotated[str, Field(description="next_page_token of a previous call")] = "",
    ) -> FoundSymbols:
        """Symbols by name (case-insensitive substring of the name or qualified name)."""
        if not name.strip():
            raise ToolError("INVALID_ARGUMENT: name must name something (it is blank)")
        try:
            kind_value = proto_mapping.symbol_kind_value(kind)
        except ValueError:
            kinds = ", ".join(proto_mapping.symbol_kinds())
            raise ToolError(f"INVALID_ARGUMENT: unknown kind {kind!r}; one of: {kinds}") from None
        async with self._call("find_symbols", ctx, project=project) as credential:
            reply = await self._gateway.find_symbols(
                credential,
                ast_pb2.FindSymbolsRequest(
                    project_id=project,
                    name=name,
                    kind=kind_value,  # type: ignore[arg-type]
                    path_prefix=path_prefix,
                    exact=exact,
                    # As `locus symbols --exact`: the end of a qualified name after a separator
                    # counts (`Session.send` finds `requests.sessions.Session.send`).
                    exact_name_end=exact,
                    page=common_pb2.PageRequest(page_size=limit, page_token=page_token),
                ),
            )
            found = FoundSymbols(
                symbols=[proto_mapping.symbol_summary(s) for s in reply.symbols],
                next_page_token=reply.next_page_token,
            )
            return await self._labelled(credential, found, asked_project=project)

    async def get_symbol(
        self,
        node_id: Annotated[
            str, Field(min_length=1, description="a node_id from locate or find_symbols")
        ],
        ctx: Context,  # type: ignore[type-arg]
        include_relations: Annotated[
            bool, Field(description="calls, imports, inheritance, references")
        ] = True,
    ) -> SymbolDetails:
        """One symbol: its signature and docstring, enclosing symbols, children, and what it
        calls / imports / inherits (outgoing) and what refers to it (incoming)."""
        async with self._call("get_symbol", ctx) as credential:
            reply = await self._gateway.get_ast_node(
                credential,
                ast_pb2.GetNodeRequest(node_id=node_id, include_relations=include_relations),
            )
            parents: list[SymbolSummary] = []
            parent_id = reply.symbol.parent_node_id
            while parent_id and len(parents) < MAX_PARENTS:
                parent = await self._gateway.get_ast_node(
                    credential, ast_pb2.GetNodeRequest(node_id=parent_id)
                )
                parents.append(proto_mapping.symbol_summary(parent.symbol))
                parent_id = parent.symbol.parent_node_id
            cap = self._limits.max_relations
            details = SymbolDetails(
                symbol=proto_mapping.symbol_summary(reply.symbol),
                parents=parents,
                children=[proto_mapping.symbol_summary(s) for s in reply.children[:cap]],
                outgoing=[proto_mapping.relation(r) for r in reply.outgoing[:cap]],
                incoming=[proto_mapping.relation(r) for r in reply.incoming[:cap]],
                truncated=max(len(reply.children), len(reply.outgoing), len(reply.incoming)) > cap,
            )
            return await self._labelled(credential, details)

    async def symbol_impact(
        self,
        node_id: Annotated[
            str, Field(min_length=1, description="a node_id from locate or find_symbols")
        ],
        ctx: Context,  # type: ignore[type-arg]
        depth: Annotated[int, Field(ge=1, le=5, description="hops through calls/imports")] = 2,
        limit: Annotated[int, Field(ge=1, le=200, description="at most this many of each")] = 30,
    ) -> SymbolImpact:
        """What a change to one symbol could affect: its callers, callees and dependents in
        its project, and their files, nearest first."""
        async with self._call("symbol_impact", ctx) as credential:
            node = await self._gateway.get_ast_node(
                credential, ast_pb2.GetNodeRequest(node_id=node_id)
            )
            reply = await self._gateway.compute_impact(
                credential,
                impact_pb2.ComputeImpactRequest(
                    project_id=node.symbol.location.project_id,
                    seed_node_ids=[node_id],
                    depth=depth,
                    limit=limit,
                ),
            )
            result = SymbolImpact(
                symbol=proto_mapping.symbol_summary(node.symbol),
                impacted_symbols=proto_mapping.impacted_symbols(reply),
                impacted_files=proto_mapping.impacted_files(reply),
            )
            return await self._labelled(credential, result)

    async def read_file(
        self,
        project: Project,
        path: Annotated[str, Field(min_length=1, description="path as scanned, e.g. src/app.py")],
        ctx: Context,  # type: ignore[type-arg]
        start_line: Annotated[int, Field(ge=1)] = 1,
        end_line: Annotated[int, Field(ge=0, description="inclusive; 0 = to the end")] = 0,
    ) -> FileLines:
        """A scanned file's numbered lines (1-based, inclusive), at most a few hundred lines
        per call: when `truncated`, read on from `end_line + 1`."""
        if end_line and end_line < start_line:
            raise ToolError("INVALID_ARGUMENT: end_line must be 0 or at least start_line")
        last_allowed = start_line + self._limits.max_read_lines - 1
        asked_end = min(end_line, last_allowed) if end_line else last_allowed
        async with self._call("read_file", ctx, project=project) as credential:
            reply = await self._gateway.read_file(
                credential,
                gateway_pb2.ReadFileRequest(
                    project_id=project,
                    relative_path=path,
                    start_line=start_line,
                    end_line=asked_end,
                ),
            )
            lines = proto_mapping.file_lines(
                reply,
                max_lines=self._limits.max_read_lines,
                max_chars=self._limits.max_read_chars,
            )
            wanted_end = min(end_line or reply.total_lines, reply.total_lines)
            lines.truncated = lines.end_line < wanted_end
            return await self._labelled(credential, lines, asked_project=project)

    async def ask(
        self,
        question: Question,
        ctx: Context,  # type: ignore[type-arg]
        project: ProjectOrScope = "",
        scope: ScopeField = None,
        max_context_chunks: Annotated[
            int,
            Field(ge=0, le=32, description="0 = the gateway's default; at most 32 (its limit)"),
        ] = 0,
    ) -> AnswerResult:
        """A grounded answer to a question about the code (of one project, or of every project
        of a scope), with its citations and the cited lines (snippets), each naming its
        project. `grounded` is false when the code found does not back an answer."""
        async with self._call("ask", ctx, project=project) as credential:
            project_id, scope_message = _target(project, scope)
            text: list[str] = []
            names: dict[str, str] = {}
            result = AnswerResult(
                request_id="", answer="", grounded=False, status="", citations=[], snippets=[]
            )
            async for event in self._gateway.ask(
                credential,
                gateway_pb2.AskRequest(
                    project_id=project_id,
                    question=question,
                    max_context_chunks=max_context_chunks,
                    scope=scope_message,
                ),
            ):
                result.request_id = result.request_id or event.request_id
                kind = event.WhichOneof("event")
                if kind == "located":
                    names.update(proto_mapping.located_project_names(event.located))
                elif kind == "text":
                    text.append(event.text.text)
                elif kind == "citation":
                    result.citations.append(proto_mapping.citation(event.citation))
                elif kind == "snippet":
                    result.snippets.append(proto_mapping.snippet(event.snippet))
                elif kind == "error":
                    result.errors.append(f"{event.error.code}: {event.error.message}")
                elif kind == "final":
                    result.status = proto_mapping.final_status_name(event.final.status)
                    result.grounded = event.final.grounded
                    result.message = event.final.message
            result.answer = "".join(text)
            return await self._labelled(credential, result, asked_project=project_id, names=names)
