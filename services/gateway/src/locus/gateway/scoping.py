"""Service layer of questions wider than one project (Locate, Search and Ask with a Scope): resolve
the scope to the projects the caller may read, ask each project alone (the one-project path,
unchanged, at most ``scope_parallelism`` at a time) and merge the per-project results by their
scores, each labelled with its project.

Merging by score is an approximation: each project's scores are relevance within that project
(the learned ranker's for Locate, retrieval's fused score for Search), not calibrated across
projects. A project of a subsystem or system the caller may not read is left out silently; a
project the caller names and may not read is refused (PERMISSION_DENIED), as for one project."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from locus.gateway.access_control import AccessControl
from locus.gateway.domain.access import Principal, Role
from locus.gateway.domain.errors import GatewayError, InvalidRequest
from locus.gateway.domain.scopes import ProjectScope
from locus.gateway.domain.validation import bounded_count
from locus.gateway.downstream import ChunkSearch, ProjectRegistry
from locus.gateway.locating import Located, LocateQuery, Locator
from locus.gateway.request_log import OpenRequest
from locus.gateway.settings import GatewaySettings
from locus.rpc import ServiceError
from locus.v1 import common_pb2, gateway_pb2, impact_pb2, ingestion_pb2, retrieval_pb2

LIST_PAGE = 200
Result = TypeVar("Result")


def scope_of(message: Any) -> ProjectScope:
    """The domain scope of a request's ``scope`` field (unset: not given)."""
    return ProjectScope.of(list(message.projects), message.subsystem, message.system)


@dataclass(frozen=True)
class ScopedLocated:
    response: gateway_pb2.LocateResponse  # merged
    hits: list[Any]  # every project's retrieval SearchHits, project after project
    located: list[tuple[Any, Located]]  # (ingestion Project, what was located in it alone)


class ScopedQuestions:
    def __init__(
        self,
        settings: GatewaySettings,
        projects: ProjectRegistry,
        access: AccessControl,
        locator: Locator,
        search: ChunkSearch,
    ) -> None:
        self._settings = settings
        self._projects = projects
        self._access = access
        self._locator = locator
        self._search = search

    async def resolve(
        self, principal: Principal, scope: ProjectScope, *, method: str, entry: OpenRequest
    ) -> list[Any]:
        """The ingestion Projects of ``scope`` that ``principal`` may read, in a stable order."""
        with entry.timed("resolve_scope"):
            if scope.projects:
                found = await self._named(principal, scope.projects, method)
            else:
                found = await self._listed(principal, scope)
        if not found:
            raise InvalidRequest(
                f"{scope.describe()} holds no project you may read; name projects you may "
                "read, or another subsystem or system"
            )
        limit = self._settings.max_scope_projects
        if len(found) > limit:
            raise InvalidRequest(
                f"{scope.describe()} covers {len(found)} projects; a scope may cover at most "
                f"{limit}: narrow it to a subsystem or name the projects"
            )
        entry.notes.append(
            f"scope {scope.describe()}: " + ", ".join(project.name for project in found)
        )
        return found

    async def _named(
        self, principal: Principal, references: tuple[str, ...], method: str
    ) -> list[Any]:
        found: dict[str, Any] = {}
        for reference in references:
            await self._access.require_project(principal, Role.READER, reference, method=method)
            project = await self._projects.get_project(reference)
            found.setdefault(project.project_id, project)
        return list(found.values())

    async def _listed(self, principal: Principal, scope: ProjectScope) -> list[Any]:
        found: list[Any] = []
        token = ""
        while True:
            page = await self._projects.list_projects(
                ingestion_pb2.ListProjectsRequest(
                    system=scope.system,
                    subsystem=scope.subsystem,
                    page=common_pb2.PageRequest(page_size=LIST_PAGE, page_token=token),
                )
            )
            found.extend(
                project
                for project in page.projects
                if principal.may(Role.READER, project.project_id, project.name)
                or principal.may_everywhere(Role.READER)
            )
            token = page.next_page_token
            if not token or len(found) > self._settings.max_scope_projects:
                return found

    async def locate(
        self, query: LocateQuery, projects: list[Any], entry: OpenRequest
    ) -> ScopedLocated:
        """Locate in each project alone, then one list of files and one of symbols by score.
        A project where nothing could be located (not scanned yet, a failing service) is
        reported in ``projects[].skipped``; when every project failed, the first error is
        raised."""
        if query.include_candidates:
            raise InvalidRequest("include_candidates needs one project (project_id), not a scope")
        s = self._settings
        max_files = bounded_count(
            "max_files", query.max_files, default=s.default_max_files, limit=s.max_files_limit
        )
        max_symbols = bounded_count(
            "max_symbols",
            query.max_symbols,
            default=s.default_max_symbols,
            limit=s.max_symbols_limit,
        )

        async def locate_one(project: Any, child: OpenRequest) -> Located:
            return await self._locator.locate(replace(query, project_ref=project.project_id), child)

        outcomes = await self._each_project(projects, locate_one, entry)
        located = [(p, result) for p, result in outcomes if isinstance(result, Located)]
        if not located:
            raise _first_error(outcomes)

        files = sorted(
            (
                (file.score, order, project, file)
                for order, (project, result) in enumerate(located)
                for file in result.response.files
            ),
            key=lambda item: (-item[0], item[1]),
        )[:max_files]
        symbols = sorted(
            (
                (symbol.score, order, symbol)
                for order, (_, result) in enumerate(located)
                for symbol in result.response.symbols
            ),
            key=lambda item: (-item[0], item[1]),
        )[:max_symbols]
        response = gateway_pb2.LocateResponse(
            request_id=entry.request_id, ranker=located[0][1].response.ranker
        )
        response.files.extend(file for _, _, _, file in files)  # each labelled by its Locate
        response.symbols.extend(symbol for _, _, symbol in symbols)
        in_files: dict[str, int] = {}
        for _, _, project, _ in files:
            in_files[project.project_id] = in_files.get(project.project_id, 0) + 1
        for project, result in outcomes:
            item = response.projects.add(
                project_id=project.project_id, name=project.name, snapshot_id=""
            )
            if isinstance(result, Located):
                item.snapshot_id = result.project.latest_snapshot_id
                item.impact.CopyFrom(result.response.impact)
                item.files = in_files.get(project.project_id, 0)
            else:
                item.skipped = str(result)
        top = files[0][2].project_id if files else located[0][0].project_id
        response.impact.CopyFrom(
            next(
                (r.response.impact for p, r in located if p.project_id == top),
                impact_pb2.ComputeImpactResponse(),
            )
        )
        return ScopedLocated(
            response=response,
            hits=[hit for _, result in located for hit in result.hits],
            located=located,
        )

    async def search(
        self, request: retrieval_pb2.SearchRequest, projects: list[Any], entry: OpenRequest
    ) -> retrieval_pb2.SearchResponse:
        """retrieval Search in each project alone (filters.project_id set, the scope not
        forwarded), merged: hits, files, whole files and each query's whole files by score."""

        async def search_one(project: Any, child: OpenRequest) -> Any:
            forwarded = retrieval_pb2.SearchRequest()
            forwarded.CopyFrom(request)
            forwarded.ClearField("scope")
            forwarded.filters.project_id = project.project_id
            with child.timed("search"):
                return await self._search.search(forwarded)

        outcomes = await self._each_project(projects, search_one, entry)
        answered = [
            result for _, result in outcomes if isinstance(result, retrieval_pb2.SearchResponse)
        ]
        if not answered:
            raise _first_error(outcomes)
        for project, result in outcomes:
            if not isinstance(result, retrieval_pb2.SearchResponse):
                entry.notes.append(f"{project.name}: not searched: {result}")
        hits_limit = request.top_k or max(len(r.hits) for r in answered)
        merged = retrieval_pb2.SearchResponse(mode=answered[0].mode)
        merged.hits.extend(_by_score([r.hits for r in answered], hits_limit))
        merged.files.extend(_by_score([r.files for r in answered], request.top_files))
        merged.whole_files.extend(
            _by_score([r.whole_files for r in answered], request.top_whole_files)
        )
        for index, query in enumerate(request.whole_file_queries):
            merged.whole_file_lists.add(query=query).files.extend(
                _by_score(
                    [
                        r.whole_file_lists[index].files
                        for r in answered
                        if len(r.whole_file_lists) > index
                    ],
                    request.top_whole_files,
                )
            )
        for files in (
            merged.files,
            merged.whole_files,
            *(listed.files for listed in merged.whole_file_lists),
        ):
            for rank, file in enumerate(files, start=1):
                file.rank = rank
        return merged

    async def _each_project(
        self,
        projects: list[Any],
        ask: Callable[[Any, OpenRequest], Awaitable[Result]],
        entry: OpenRequest,
    ) -> list[tuple[Any, Result | Exception]]:
        """``ask`` for every project, at most scope_parallelism at a time, each with a request
        entry of its own (merged back: stage timings summed, notes named by project)."""
        gate = asyncio.Semaphore(self._settings.scope_parallelism)

        async def one(project: Any) -> tuple[Any, Result | Exception]:
            child = OpenRequest(
                request_id=entry.request_id,
                kind=entry.kind,
                project_ref=project.project_id,
                created_at=entry.created_at,
                started=entry.started,
            )
            async with gate:
                try:
                    result: Result | Exception = await ask(project, child)
                except (GatewayError, ServiceError) as error:
                    result = error
            for stage, milliseconds in child.timings_ms.items():
                entry.timings_ms[stage] = round(entry.timings_ms.get(stage, 0.0) + milliseconds, 2)
            entry.notes.extend(f"{project.name}: {note}" for note in child.notes)
            return project, result

        return list(await asyncio.gather(*(one(project) for project in projects)))


def _by_score(lists: list[Any], limit: int) -> list[Any]:
    """The items of several score-ordered lists as one, best score first (ties: the earlier
    list), at most ``limit`` (0 = none)."""
    ranked = sorted(
        ((item.score, order, item) for order, items in enumerate(lists) for item in items),
        key=lambda entry: (-entry[0], entry[1]),
    )
    return [item for _, _, item in ranked[:limit]]


def _first_error(outcomes: list[tuple[Any, Any]]) -> Exception:
    errors = [result for _, result in outcomes if isinstance(result, Exception)]
    return errors[0] if errors else InvalidRequest("the scope holds no project")
