"""The registry's store: systems, their subsystems and which subsystem each project belongs to
(SQLAlchemy, over the ingestion database). Names unique within their parent are enforced by the
schema; a system with subsystems, or a subsystem with projects, is never deleted."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Select, func, select, update
from sqlalchemy.exc import IntegrityError

from locus.database import Database
from locus.ingestion.adapters.tables import ProjectRow, SubsystemRow, SystemRow
from locus.ingestion.domain.errors import (
    ProjectAlreadyExists,
    RegistryNameTaken,
    RegistryNotEmpty,
)


@dataclass(frozen=True)
class SystemEntry:
    system: SystemRow
    subsystems: int


@dataclass(frozen=True)
class SubsystemEntry:
    subsystem: SubsystemRow
    system_name: str
    projects: int


@dataclass(frozen=True)
class Placement:
    """Where a project sits in the registry."""

    system_id: str
    system_name: str
    subsystem_id: str
    subsystem_name: str


class RegistryStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    # systems

    async def create_system(self, row: SystemRow) -> SystemRow:
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:
            raise RegistryNameTaken(f"a system named {row.name!r} exists already") from None
        return row

    async def find_system(self, id_or_name: str) -> SystemEntry | None:
        async with self._db.sessions() as session:
            row = await session.get(SystemRow, id_or_name)
            if row is None:
                row = await session.scalar(select(SystemRow).where(SystemRow.name == id_or_name))
            if row is None:
                return None
            count = await session.scalar(
                select(func.count())
                .select_from(SubsystemRow)
                .where(SubsystemRow.system_id == row.system_id)
            )
            return SystemEntry(row, int(count or 0))

    async def list_systems(self, offset: int, limit: int) -> list[SystemEntry]:
        counts = (
            select(SubsystemRow.system_id, func.count().label("subsystems"))
            .group_by(SubsystemRow.system_id)
            .subquery()
        )
        async with self._db.sessions() as session:
            rows = await session.execute(
                select(SystemRow, func.coalesce(counts.c.subsystems, 0))
                .outerjoin(counts, counts.c.system_id == SystemRow.system_id)
                .order_by(SystemRow.name)
                .offset(offset)
                .limit(limit)
            )
            return [SystemEntry(system, int(count)) for system, count in rows]

    async def update_system(
        self, system_id: str, name: str | None, description: str | None
    ) -> None:
        values = _changed(name=name, description=description)
        if not values:
            return
        try:
            async with self._db.transaction() as session:
                await session.execute(
                    update(SystemRow).where(SystemRow.system_id == system_id).values(**values)
                )
        except IntegrityError:
            raise RegistryNameTaken(f"a system named {name!r} exists already") from None

    async def delete_system(self, system_id: str, shown_as: str) -> None:
        await self._delete_if_empty(
            SystemRow,
            system_id,
            select(SubsystemRow.name)
            .where(SubsystemRow.system_id == system_id)
            .order_by(SubsystemRow.name),
            f"system {shown_as!r}",
            "subsystem(s)",
            "delete or move them first (locus subsystem delete)",
        )

    async def _delete_if_empty(
        self,
        row_type: type[SystemRow] | type[SubsystemRow],
        row_id: str,
        members: Select[str],
        what: str,
        member_kind: str,
        remedy: str,
    ) -> None:
        """Delete a system or subsystem in one transaction; RegistryNotEmpty (naming the first
        five of ``members``, the names of what it still holds) while it holds anything."""
        async with self._db.transaction() as session:
            names = list(await session.scalars(members))
            if names:
                listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
                raise RegistryNotEmpty(
                    f"{what} still has {len(names)} {member_kind} ({listed}); {remedy}"
                )
            row = await session.get(row_type, row_id)
            if row is not None:
                await session.delete(row)

    # subsystems

    async def create_subsystem(self, row: SubsystemRow, system_name: str) -> SubsystemRow:
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:
            raise RegistryNameTaken(
                f"system {system_name!r} has a subsystem named {row.name!r} already"
            ) from None
        return row

    async def find_subsystem(
        self, subsystem_id: str = "", *, system_id: str = "", name: str = ""
    ) -> SubsystemEntry | None:
        """By id, or by name within a system."""
        statement = select(SubsystemRow, SystemRow.name).join(
            SystemRow, SystemRow.system_id == SubsystemRow.system_id
        )
        if subsystem_id:
            statement = statement.where(SubsystemRow.subsystem_id == subsystem_id)
        else:
            statement = statement.where(
                SubsystemRow.system_id == system_id, SubsystemRow.name == name
            )
        async with self._db.sessions() as session:
            found = (await session.execute(statement)).first()
            if found is None:
                return None
            subsystem, system_name = found
            count = await session.scalar(
                select(func.count())
                .select_from(ProjectRow)
                .where(ProjectRow.subsystem_id == subsystem.subsystem_id)
            )
            return SubsystemEntry(subsystem, system_name, int(count or 0))

    async def list_subsystems(
        self, system_id: str | None, offset: int, limit: int
    ) -> list[SubsystemEntry]:
        counts = (
            select(ProjectRow.subsystem_id, func.count().label("projects"))
            .where(ProjectRow.subsystem_id.is_not(None))
            .group_by(ProjectRow.subsystem_id)
            .subquery()
        )
        statement = (
            select(SubsystemRow, SystemRow.name, func.coalesce(counts.c.projects, 0))
            .join(SystemRow, SystemRow.system_id == SubsystemRow.system_id)
            .outerjoin(counts, counts.c.subsystem_id == SubsystemRow.subsystem_id)
        )
        if system_id is not None:
            statement = statement.where(SubsystemRow.system_id == system_id)
        async with self._db.sessions() as session:
            rows = await session.execute(
                statement.order_by(SystemRow.name, SubsystemRow.name).offset(offset).limit(limit)
            )
            return [SubsystemEntry(row, name, int(count)) for row, name, count in rows]

    async def update_subsystem(
        self, entry: SubsystemEntry, name: str | None, description: str | None
    ) -> None:
        values = _changed(name=name, description=description)
        if not values:
            return
        try:
            async with self._db.transaction() as session:
                await session.execute(
                    update(SubsystemRow)
                    .where(SubsystemRow.subsystem_id == entry.subsystem.subsystem_id)
                    .values(**values)
                )
        except IntegrityError:
            raise RegistryNameTaken(
                f"system {entry.system_name!r} has a subsystem named {name!r} already"
            ) from None

    async def delete_subsystem(self, subsystem_id: str, shown_as: str) -> None:
        await self._delete_if_empty(
            SubsystemRow,
            subsystem_id,
            select(ProjectRow.name)
            .where(ProjectRow.subsystem_id == subsystem_id)
            .order_by(ProjectRow.name),
            f"subsystem {shown_as!r}",
            "project(s)",
            "move them elsewhere first (locus project move)",
        )

    # projects

    async def placements(self, subsystem_ids: Iterable[str | None]) -> dict[str, Placement]:
        wanted = sorted({s for s in subsystem_ids if s})
        if not wanted:
            return {}
        async with self._db.sessions() as session:
            rows = await session.execute(
                select(
                    SubsystemRow.subsystem_id,
                    SubsystemRow.name,
                    SystemRow.system_id,
                    SystemRow.name,
                )
                .join(SystemRow, SystemRow.system_id == SubsystemRow.system_id)
                .where(SubsystemRow.subsystem_id.in_(wanted))
            )
            return {
                subsystem_id: Placement(system_id, system_name, subsystem_id, subsystem_name)
                for subsystem_id, subsystem_name, system_id, system_name in rows
            }

    async def update_project(
        self, project_id: str, name: str | None, subsystem_id: str | None, move: bool
    ) -> None:
        values: dict[str, object] = _changed(name=name)
        if move:
            values["subsystem_id"] = subsystem_id
        if not values:
            return
        try:
            async with self._db.transaction() as session:
                await session.execute(
                    update(ProjectRow).where(ProjectRow.project_id == project_id).values(**values)
                )
        except IntegrityError:
            raise ProjectAlreadyExists(f"a project named {name!r} exists already") from None

    async def list_projects(
        self, offset: int, limit: int, *, system_id: str | None, subsystem_id: str | None
    ) -> list[ProjectRow]:
        statement = select(ProjectRow)
        if subsystem_id is not None:
            statement = statement.where(ProjectRow.subsystem_id == subsystem_id)
        if system_id is not None:
            statement = statement.join(
                SubsystemRow, SubsystemRow.subsystem_id == ProjectRow.subsystem_id
            ).where(SubsystemRow.system_id == system_id)
        async with self._db.sessions() as session:
            rows = await session.scalars(
                statement.order_by(ProjectRow.name).offset(offset).limit(limit)
            )
            return list(rows)


def _changed(**fields: str | None) -> dict[str, object]:
    return {key: value for key, value in fields.items() if value is not None}
