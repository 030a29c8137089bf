"""The registry's RPCs of IngestionService (systems, subsystems, UpdateProject) and their
protobuf mapping; mixed into IngestionServicer, which maps domain errors to status codes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from google.protobuf.message import Message

from locus.ingestion.adapters.registry_store import Placement, SubsystemEntry, SystemEntry
from locus.ingestion.adapters.tables import ProjectRow
from locus.ingestion.registry import Registry
from locus.rpc import InvalidArgument, RpcContext
from locus.v1 import common_pb2, ingestion_pb2

T = TypeVar("T")


def project_message(row: ProjectRow, placement: Placement | None) -> ingestion_pb2.Project:
    message = ingestion_pb2.Project(
        project_id=row.project_id,
        name=row.name,
        latest_snapshot_id=row.latest_snapshot_id,
    )
    if placement is not None:
        message.system_id = placement.system_id
        message.system = placement.system_name
        message.subsystem_id = placement.subsystem_id
        message.subsystem = placement.subsystem_name
    message.created_at.FromDatetime(row.created_at)
    return message


def system_message(entry: SystemEntry) -> ingestion_pb2.System:
    message = ingestion_pb2.System(
        system_id=entry.system.system_id,
        name=entry.system.name,
        description=entry.system.description,
        subsystem_count=entry.subsystems,
    )
    message.created_at.FromDatetime(entry.system.created_at)
    return message


def subsystem_message(entry: SubsystemEntry) -> ingestion_pb2.Subsystem:
    row = entry.subsystem
    message = ingestion_pb2.Subsystem(
        subsystem_id=row.subsystem_id,
        system_id=row.system_id,
        system=entry.system_name,
        name=row.name,
        description=row.description,
        project_count=entry.projects,
    )
    message.created_at.FromDatetime(row.created_at)
    return message


def _optional(message: Message, field: str) -> str | None:
    """The value of a proto3 ``optional`` string field, None when unset."""
    return str(getattr(message, field)) if message.HasField(field) else None


class RegistryRpcs:
    """Systems, subsystems and project placement; the servicer it is mixed into provides
    ``_registry`` and the error mapping and paging below."""

    _registry: Registry

    async def _call(self, work: Callable[[], Awaitable[T]]) -> T:
        raise NotImplementedError

    def _page(self, page: common_pb2.PageRequest) -> tuple[int, int]:
        raise NotImplementedError

    def _next_token(self, offset: int, limit: int, returned: int) -> str:
        raise NotImplementedError

    async def _project_messages(self, rows: Sequence[ProjectRow]) -> list[ingestion_pb2.Project]:
        placements = await self._registry.placements(rows)
        return [project_message(row, placements.get(row.subsystem_id or "")) for row in rows]

    async def CreateSystem(
        self, request: ingestion_pb2.CreateSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        entry = await self._call(
            lambda: self._registry.create_system(request.name, request.description)
        )
        return system_message(entry)

    async def GetSystem(
        self, request: ingestion_pb2.GetSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        return system_message(
            await self._call(lambda: self._registry.get_system(request.system_id))
        )

    async def ListSystems(
        self, request: ingestion_pb2.ListSystemsRequest, context: RpcContext
    ) -> ingestion_pb2.ListSystemsResponse:
        offset, limit = self._page(request.page)
        entries = await self._registry.list_systems(offset, limit)
        return ingestion_pb2.ListSystemsResponse(
            systems=[system_message(e) for e in entries],
            next_page_token=self._next_token(offset, limit, len(entries)),
        )

    async def UpdateSystem(
        self, request: ingestion_pb2.UpdateSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        entry = await self._call(
            lambda: self._registry.update_system(
                request.system_id, _optional(request, "name"), _optional(request, "description")
            )
        )
        return system_message(entry)

    async def DeleteSystem(
        self, request: ingestion_pb2.DeleteSystemRequest, context: RpcContext
    ) -> ingestion_pb2.System:
        return system_message(
            await self._call(lambda: self._registry.delete_system(request.system_id))
        )

    async def CreateSubsystem(
        self, request: ingestion_pb2.CreateSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        entry = await self._call(
            lambda: self._registry.create_subsystem(
                request.system_id, request.name, request.description
            )
        )
        return subsystem_message(entry)

    async def GetSubsystem(
        self, request: ingestion_pb2.GetSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        entry = await self._call(
            lambda: self._registry.get_subsystem(request.subsystem_id, request.system_id)
        )
        return subsystem_message(entry)

    async def ListSubsystems(
        self, request: ingestion_pb2.ListSubsystemsRequest, context: RpcContext
    ) -> ingestion_pb2.ListSubsystemsResponse:
        offset, limit = self._page(request.page)
        entries = await self._call(
            lambda: self._registry.list_subsystems(request.system_id, offset, limit)
        )
        return ingestion_pb2.ListSubsystemsResponse(
            subsystems=[subsystem_message(e) for e in entries],
            next_page_token=self._next_token(offset, limit, len(entries)),
        )

    async def UpdateSubsystem(
        self, request: ingestion_pb2.UpdateSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        entry = await self._call(
            lambda: self._registry.update_subsystem(
                request.subsystem_id,
                request.system_id,
                _optional(request, "name"),
                _optional(request, "description"),
            )
        )
        return subsystem_message(entry)

    async def DeleteSubsystem(
        self, request: ingestion_pb2.DeleteSubsystemRequest, context: RpcContext
    ) -> ingestion_pb2.Subsystem:
        entry = await self._call(
            lambda: self._registry.delete_subsystem(request.subsystem_id, request.system_id)
        )
        return subsystem_message(entry)

    async def _update_project(
        self, project: ProjectRow, request: ingestion_pb2.UpdateProjectRequest
    ) -> None:
        if not request.HasField("name") and not request.HasField("subsystem_id"):
            raise InvalidArgument(
                "give the project's new 'name', or 'subsystem_id' to move it (\"\" = none)"
            )
        await self._call(
            lambda: self._registry.update_project(
                project,
                _optional(request, "name"),
                _optional(request, "subsystem_id"),
                request.system,
            )
        )
