"""Service layer of the registry: System -> Subsystem -> Project. Creates, renames, describes and
deletes systems and subsystems (never one that still holds something), places a project in at
most one subsystem, and lists projects by system or subsystem."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from locus.ingestion.adapters.registry_store import (
    Placement,
    RegistryStore,
    SubsystemEntry,
    SystemEntry,
)
from locus.ingestion.adapters.tables import ProjectRow, SubsystemRow, SystemRow
from locus.ingestion.domain.errors import (
    InvalidRequest,
    RegistryNameTaken,
    SubsystemNotFound,
    SystemNotFound,
)
from locus.ingestion.domain.naming import (
    validate_description,
    validate_label,
    validate_project_name,
    validate_registry_name,
)

DEFAULT_NAME = "default"  # CreateProject's label compatibility: the missing half of a pair
MAX_REFERENCE = 100


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


def _reference(field: str, value: str) -> str:
    value = value.strip()
    if len(value) > MAX_REFERENCE:
        raise InvalidRequest(f"{field} is longer than {MAX_REFERENCE} characters")
    return value


class Registry:
    def __init__(
        self,
        store: RegistryStore,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._now = clock

    # systems

    async def create_system(self, name: str, description: str) -> SystemEntry:
        row = SystemRow(
            system_id=_new_id("sys"),
            name=validate_registry_name("system", name),
            description=validate_description(description),
            created_at=self._now(),
        )
        return SystemEntry(await self._store.create_system(row), 0)

    async def get_system(self, reference: str) -> SystemEntry:
        reference = _reference("system_id", reference)
        if not reference:
            raise InvalidRequest("system_id must name a system (its id or name)")
        found = await self._store.find_system(reference)
        if found is None:
            raise SystemNotFound(
                f"no system {reference!r}; list them with locus system list, or create it "
                "(locus system create NAME)"
            )
        return found

    async def list_systems(self, offset: int, limit: int) -> list[SystemEntry]:
        return await self._store.list_systems(offset, limit)

    async def update_system(
        self, reference: str, name: str | None, description: str | None
    ) -> SystemEntry:
        system = await self.get_system(reference)
        if name is None and description is None:
            raise InvalidRequest("give the system's new name or description (or both)")
        await self._store.update_system(
            system.system.system_id,
            None if name is None else validate_registry_name("system", name),
            None if description is None else validate_description(description),
        )
        return await self.get_system(system.system.system_id)

    async def delete_system(self, reference: str) -> SystemEntry:
        system = await self.get_system(reference)
        await self._store.delete_system(system.system.system_id, system.system.name)
        return system

    # subsystems

    async def create_subsystem(
        self, system_reference: str, name: str, description: str
    ) -> SubsystemEntry:
        if not system_reference.strip():
            raise InvalidRequest("system_id must name the subsystem's system (its id or name)")
        system = await self.get_system(system_reference)
        row = SubsystemRow(
            subsystem_id=_new_id("sub"),
            system_id=system.system.system_id,
            name=validate_registry_name("subsystem", name),
            description=validate_description(description),
            created_at=self._now(),
        )
        return SubsystemEntry(
            await self._store.create_subsystem(row, system.system.name), system.system.name, 0
        )

    async def get_subsystem(self, reference: str, system_reference: str = "") -> SubsystemEntry:
        """By id; or by name within the system named by ``system_reference``."""
        reference = _reference("subsystem_id", reference)
        if not reference:
            raise InvalidRequest(
                "subsystem_id must name a subsystem (its id, or its name with system_id)"
            )
        if not system_reference.strip():
            found = await self._store.find_subsystem(reference)
            if found is None:
                raise SubsystemNotFound(
                    f"no subsystem with id {reference!r}; to name one by its name, give its "
                    "system too (--system)"
                )
            return found
        system = await self.get_system(system_reference)
        found = await self._store.find_subsystem(
            system_id=system.system.system_id, name=reference
        ) or await self._store.find_subsystem(reference)
        if found is None or found.subsystem.system_id != system.system.system_id:
            raise SubsystemNotFound(
                f"system {system.system.name!r} has no subsystem {reference!r}; list them with "
                f"locus subsystem list --system {system.system.name}"
            )
        return found

    async def list_subsystems(
        self, system_reference: str, offset: int, limit: int
    ) -> list[SubsystemEntry]:
        system_id = None
        if system_reference.strip():
            system_id = (await self.get_system(system_reference)).system.system_id
        return await self._store.list_subsystems(system_id, offset, limit)

    async def update_subsystem(
        self, reference: str, system_reference: str, name: str | None, description: str | None
    ) -> SubsystemEntry:
        subsystem = await self.get_subsystem(reference, system_reference)
        if name is None and description is None:
            raise InvalidRequest("give the subsystem's new name or description (or both)")
        await self._store.update_subsystem(
            subsystem,
            None if name is None else validate_registry_name("subsystem", name),
            None if description is None else validate_description(description),
        )
        return await self.get_subsystem(subsystem.subsystem.subsystem_id)

    async def delete_subsystem(self, reference: str, system_reference: str) -> SubsystemEntry:
        subsystem = await self.get_subsystem(reference, system_reference)
        shown_as = f"{subsystem.system_name}/{subsystem.subsystem.name}"
        await self._store.delete_subsystem(subsystem.subsystem.subsystem_id, shown_as)
        return subsystem

    # projects

    async def subsystem_for_new_project(
        self, subsystem_id: str, system_label: str, subsystem_label: str
    ) -> str | None:
        """The subsystem a new project goes into: by id, or (compatibility) by its system and
        subsystem names, made when missing; None for no subsystem."""
        system_label = validate_label("system", system_label)
        subsystem_label = validate_label("subsystem", subsystem_label)
        if subsystem_id.strip():
            if system_label or subsystem_label:
                raise InvalidRequest("give subsystem_id, or system and subsystem names, not both")
            return (await self.get_subsystem(subsystem_id)).subsystem.subsystem_id
        if not system_label and not subsystem_label:
            return None
        system_name = system_label or DEFAULT_NAME
        subsystem_name = subsystem_label or DEFAULT_NAME
        system = await self._store.find_system(system_name)
        if system is None:
            system = await self._made_or_found_system(system_name)
        found = await self._store.find_subsystem(
            system_id=system.system.system_id, name=subsystem_name
        )
        if found is None:
            try:
                found = await self.create_subsystem(system.system.system_id, subsystem_name, "")
            except RegistryNameTaken:  # made by a concurrent call
                found = await self.get_subsystem(subsystem_name, system.system.system_id)
        return found.subsystem.subsystem_id

    async def _made_or_found_system(self, name: str) -> SystemEntry:
        try:
            return await self.create_system(name, "")
        except RegistryNameTaken:  # made by a concurrent call
            return await self.get_system(name)

    async def update_project(
        self,
        project: ProjectRow,
        name: str | None,
        subsystem_reference: str | None,
        system_reference: str,
    ) -> None:
        """Rename ``project`` and/or move it (``subsystem_reference`` "" = out of every
        subsystem, None = where it is)."""
        if name is None and subsystem_reference is None:
            raise InvalidRequest("give the project's new name or its subsystem (or both)")
        subsystem_id = None
        if subsystem_reference:
            subsystem = await self.get_subsystem(subsystem_reference, system_reference)
            subsystem_id = subsystem.subsystem.subsystem_id
        elif system_reference.strip() and subsystem_reference is not None:
            raise InvalidRequest("give the subsystem to move the project to (with its system)")
        await self._store.update_project(
            project.project_id,
            None if name is None else validate_project_name(name),
            subsystem_id,
            move=subsystem_reference is not None,
        )

    async def list_projects(
        self, offset: int, limit: int, system_reference: str, subsystem_reference: str
    ) -> list[ProjectRow]:
        system_id = subsystem_id = None
        if subsystem_reference.strip():
            subsystem = await self.get_subsystem(subsystem_reference, system_reference)
            subsystem_id = subsystem.subsystem.subsystem_id
        elif system_reference.strip():
            system_id = (await self.get_system(system_reference)).system.system_id
        return await self._store.list_projects(
            offset, limit, system_id=system_id, subsystem_id=subsystem_id
        )

    async def placements(self, projects: Sequence[ProjectRow]) -> dict[str, Placement]:
        """Subsystem id → where it sits, for the subsystems of ``projects``."""
        return await self._store.placements(p.subsystem_id for p in projects)
