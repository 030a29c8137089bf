"""The impact store: the persisted graph projection, one SQLAlchemy implementation for SQLite
and PostgreSQL. A batch of files.parsed parts is applied in one transaction of a few statements
(``_BatchWrite``). A deleted project keeps a tombstone, recorded in the transaction that deletes
its rows; the parts of a tombstoned project are dropped inside the batch's transaction."""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from locus.database import Database, DeletedProjects, slices, table_of
from locus.database.migrations import prepare_schema
from locus.impact.adapters.migrations import SCHEMA
from locus.impact.adapters.tables import (
    DeletedProjectRow,
    DependencyRow,
    FileRow,
    ProjectRow,
    RelationRow,
    SymbolRow,
)
from locus.impact.domain import (
    GraphDependency,
    GraphFile,
    GraphRelation,
    GraphSymbol,
    HeldVersion,
    InvalidParsedFile,
    ParsedFile,
    RelationKind,
    SymbolKind,
    UpdateDecision,
    decide_update,
    is_complete,
)

_ROW_TABLES = (SymbolRow, RelationRow, DependencyRow)
_LOCK_STRIPES = 64
_INSERT_ROWS = 2000  # rows per multi-row INSERT statement


@dataclass(frozen=True)
class ApplyOutcome:
    decision: UpdateDecision
    complete: bool  # every part of the file's current version has been applied
    held_snapshot_seq: int
    project_deleted: bool = False  # the event's project was deleted: nothing of it applied


_PROJECT_DELETED = ApplyOutcome(UpdateDecision.STALE, False, 0, project_deleted=True)


@dataclass(frozen=True)
class ProjectSnapshot:
    version: int
    files: list[GraphFile]
    symbols: list[GraphSymbol]
    relations: list[GraphRelation]
    dependencies: list[GraphDependency]


def _symbol(
    node_id: str, qualified_name: str, scope_name: str, name: str, kind: str, *rest: Any
) -> GraphSymbol:
    return GraphSymbol(node_id, qualified_name, scope_name, name, cast(SymbolKind, kind), *rest)


def _relation(kind: str, *rest: Any) -> GraphRelation:
    return GraphRelation(cast(RelationKind, kind), *rest)


def _parts(text: str) -> frozenset[int]:
    return frozenset(int(p) for p in text.split(",") if p)


def _held(row: FileRow | None) -> HeldVersion | None:
    if row is None:
        return None
    return HeldVersion(
        project_id=row.project_id,
        snapshot_seq=row.snapshot_seq,
        sha256=row.sha256,
        deleted=row.deleted,
        part_count=row.part_count,
        parts_done=_parts(row.parts_done),
    )


class ImpactStore:
    """Batches of parts are applied one transaction each. Batches touching the same files are
    serialized here (and across replicas by the file rows' locks on PostgreSQL). SQLite has a
    single writer, so there every batch is serialized, which also avoids failing to upgrade a
    stale read transaction to a write."""

    def __init__(self, database: Database, *, migrate_on_start: bool = True) -> None:
        self._db = database
        self._migrate_on_start = migrate_on_start
        self._write_lock = asyncio.Lock()
        self._file_locks = [asyncio.Lock() for _ in range(_LOCK_STRIPES)]
        self._deleted = DeletedProjects(DeletedProjectRow)

    async def initialize(self) -> None:
        await prepare_schema(self._db, SCHEMA, migrate_on_start=self._migrate_on_start)

    async def close(self) -> None:
        await self._db.dispose()

    async def apply(self, event: ParsedFile) -> ApplyOutcome:
        (outcome,) = await self.apply_batch([event])
        return outcome

    async def apply_batch(self, events: Sequence[ParsedFile]) -> list[ApplyOutcome]:
        """Apply ``events`` in order, in one transaction (all or nothing); one outcome each.
        An event of a deleted project changes nothing (``project_deleted``); the deletion
        takes every lock a batch takes, so none checks before it and writes after it."""
        async with contextlib.AsyncExitStack() as locks:
            if self._db.is_sqlite:
                await locks.enter_async_context(self._write_lock)
            else:  # stripes in a fixed order, so two batches never wait on each other
                stripes = sorted({zlib.crc32(e.file_id.encode()) % _LOCK_STRIPES for e in events})
                for stripe in stripes:
                    await locks.enter_async_context(self._file_locks[stripe])
            async with self._db.transaction() as session:
                deleted = await self._deleted.among(session, {e.project_id for e in events})
                live = [e for e in events if e.project_id not in deleted]
                write = _BatchWrite(await _stored_versions(session, live))
                outcomes = [
                    _PROJECT_DELETED if event.project_id in deleted else write.apply(event)
                    for event in events
                ]
                await write.flush(session)
                for project_id in dict.fromkeys(
                    e.project_id
                    for e, o in zip(events, outcomes, strict=True)
                    if o.decision is not UpdateDecision.STALE
                ):
                    await self._bump_version(session, project_id)
            return outcomes

    async def delete_project(self, project_id: str) -> int:
        """Delete the project's graph rows (files, symbols, relations, dependencies and its
        version) and record its tombstone in one transaction; the number of files it had (0
        when it is gone already)."""
        async with contextlib.AsyncExitStack() as locks:
            if self._db.is_sqlite:
                await locks.enter_async_context(self._write_lock)
            else:  # every stripe, in order: no batch of the project is half applied meanwhile
                for stripe in self._file_locks:
                    await locks.enter_async_context(stripe)
            async with self._db.transaction() as session:
                files = await session.scalar(
                    select(func.count())
                    .select_from(FileRow)
                    .where(FileRow.project_id == project_id)
                )
                for table in (DependencyRow, RelationRow, SymbolRow, FileRow, ProjectRow):
                    await session.execute(delete(table).where(table.project_id == project_id))
                await self._deleted.record(session, project_id)
            self._deleted.remember(project_id)
            return int(files or 0)

    async def _bump_version(self, session: AsyncSession, project_id: str) -> None:
        result = await session.execute(
            update(ProjectRow)
            .where(ProjectRow.project_id == project_id)
            .values(version=ProjectRow.version + 1)
        )
        if getattr(result, "rowcount", 0) == 0:
            session.add(ProjectRow(project_id=project_id, version=1))

    async def project_version(self, project_id: str) -> int | None:
        async with self._db.sessions() as session:
            version: int | None = await session.scalar(
                select(ProjectRow.version).where(ProjectRow.project_id == project_id)
            )
            return version

    async def load_project(self, project_id: str) -> ProjectSnapshot | None:
        """The project's current graph rows, tagged with the version read before them (a
        change landing meanwhile makes the next read rebuild again, never miss it)."""
        async with self._db.sessions() as session:
            version = await session.scalar(
                select(ProjectRow.version).where(ProjectRow.project_id == project_id)
            )
            if version is None:
                return None
            file_rows = await session.execute(
                select(
                    FileRow.file_id,
                    FileRow.relative_path,
                    FileRow.module_name,
                    FileRow.language,
                    FileRow.snapshot_id,
                ).where(FileRow.project_id == project_id, FileRow.deleted.is_(False))
            )
            files = [GraphFile(*r) for r in file_rows]
            symbol_rows = await session.execute(
                select(
                    SymbolRow.node_id,
                    SymbolRow.qualified_name,
                    SymbolRow.scope_name,
                    SymbolRow.name,
                    SymbolRow.kind,
                    SymbolRow.file_id,
                    SymbolRow.relative_path,
                    SymbolRow.start_line,
                    SymbolRow.end_line,
                    SymbolRow.language,
                    SymbolRow.snapshot_id,
                    SymbolRow.signature,
                    SymbolRow.docstring,
                    SymbolRow.parent_node_id,
                    SymbolRow.parent_qualified_name,
                )
                .where(SymbolRow.project_id == project_id)
                .order_by(SymbolRow.file_id, SymbolRow.part_index, SymbolRow.ordinal)
            )
            symbols = [_symbol(*r) for r in symbol_rows]
            relation_rows = await session.execute(
                select(
                    RelationRow.kind,
                    RelationRow.source_node_id,
                    RelationRow.source_qualified_name,
                    RelationRow.target_name,
                    RelationRow.target_qualified_name,
                    RelationRow.target_node_id,
                    RelationRow.file_id,
                    RelationRow.line,
                ).where(RelationRow.project_id == project_id)
            )
            relations = [_relation(*r) for r in relation_rows]
            dependency_rows = await session.execute(
                select(
                    DependencyRow.file_id,
                    DependencyRow.target_module,
                    DependencyRow.target_file_id,
                    DependencyRow.line,
                ).where(DependencyRow.project_id == project_id)
            )
            dependencies = [GraphDependency(*r) for r in dependency_rows]
            return ProjectSnapshot(int(version), files, symbols, relations, dependencies)


async def _stored_versions(
    session: AsyncSession, events: Sequence[ParsedFile]
) -> dict[str, HeldVersion]:
    """The version the store holds of each file of ``events`` (locked for this transaction)."""
    held: dict[str, HeldVersion] = {}
    file_ids = sorted({event.file_id for event in events})
    for batch in slices(file_ids):
        rows = await session.scalars(
            select(FileRow).where(FileRow.file_id.in_(batch)).with_for_update()
        )
        for row in rows:
            version = _held(row)
            assert version is not None
            held[row.file_id] = version
    return held


class _BatchWrite:
    """What a batch of parts does to the store, decided in memory in event order and written
    by ``flush`` in a few statements: the rows stored before the batch that a new version (or
    a redelivered part) replaces are deleted per table in one statement, every new row is
    inserted per table in one multi-row statement, and each file's row is written once. A file
    the store never held has nothing to delete."""

    def __init__(self, stored: dict[str, HeldVersion]) -> None:
        self._stored = stored  # as the store held them before the batch
        self._held = dict(stored)  # as the batch has left them so far
        self._delete_files: set[str] = set()
        self._delete_parts: set[tuple[str, int]] = set()
        self._rows: dict[tuple[str, int], _PartRows] = {}
        self._files: dict[str, dict[str, Any]] = {}

    def apply(self, event: ParsedFile) -> ApplyOutcome:
        held = self._held.get(event.file_id)
        if held is not None and held.project_id != event.project_id:
            raise InvalidParsedFile(
                f"file {event.file_id} belongs to project {held.project_id}, not {event.project_id}"
            )
        decision = decide_update(held, event)
        if decision is UpdateDecision.STALE:
            assert held is not None
            return ApplyOutcome(
                decision, is_complete(held.part_count, held.parts_done), held.snapshot_seq
            )
        if decision is UpdateDecision.NEW_VERSION:
            if event.file_id in self._stored:
                self._delete_files.add(event.file_id)
            for key in [key for key in self._rows if key[0] == event.file_id]:
                del self._rows[key]
            parts_done: frozenset[int] = frozenset()
        else:
            assert held is not None
            parts_done = held.parts_done
            if event.file_id in self._stored:
                self._delete_parts.add((event.file_id, event.part_index))
        self._rows[(event.file_id, event.part_index)] = _part_rows(event)
        parts_done = parts_done | {event.part_index}
        part_count = max(event.part_count, 1)
        self._held[event.file_id] = HeldVersion(
            project_id=event.project_id,
            snapshot_seq=event.snapshot_seq,
            sha256=event.sha256,
            deleted=event.deleted,
            part_count=part_count,
            parts_done=parts_done,
        )
        self._files[event.file_id] = {
            "file_id": event.file_id,
            "project_id": event.project_id,
            "snapshot_id": event.snapshot_id,
            "snapshot_seq": event.snapshot_seq,
            "sha256": event.sha256,
            "relative_path": event.relative_path,
            "module_name": event.module_name,
            "language": event.language,
            "deleted": event.deleted,
            "part_count": part_count,
            "parts_done": ",".join(str(p) for p in sorted(parts_done)),
        }
        return ApplyOutcome(decision, is_complete(part_count, parts_done), event.snapshot_seq)

    async def flush(self, session: AsyncSession) -> None:
        replaced = sorted(self._delete_files)
        stored_files = sorted(file_id for file_id in self._files if file_id in self._stored)
        for batch in slices(replaced):
            for table in _ROW_TABLES:
                await session.execute(delete(table).where(table.file_id.in_(batch)))
        for file_id, part_index in sorted(self._delete_parts):
            if file_id not in self._delete_files:
                for table in _ROW_TABLES:
                    await session.execute(
                        delete(table).where(
                            table.file_id == file_id, table.part_index == part_index
                        )
                    )
        for batch in slices(stored_files):
            await session.execute(delete(FileRow).where(FileRow.file_id.in_(batch)))
        inserts: list[tuple[Any, list[dict[str, Any]]]] = [
            (FileRow, list(self._files.values())),
            (SymbolRow, [row for part in self._rows.values() for row in part.symbols]),
            (RelationRow, [row for part in self._rows.values() for row in part.relations]),
            (DependencyRow, [row for part in self._rows.values() for row in part.dependencies]),
        ]
        for table, rows in inserts:
            for values in slices(rows, _INSERT_ROWS):
                await session.execute(insert(table_of(table)), values)


@dataclass(frozen=True)
class _PartRows:
    symbols: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    dependencies: list[dict[str, Any]]


def _part_rows(event: ParsedFile) -> _PartRows:
    key = {"file_id": event.file_id, "part_index": event.part_index}
    project = {"project_id": event.project_id}
    symbols = [
        {
            **key,
            **project,
            "ordinal": ordinal,
            "node_id": s.node_id,
            "qualified_name": s.qualified_name,
            "scope_name": s.scope_name,
            "name": s.name,
            "kind": s.kind,
            "relative_path": s.relative_path or event.relative_path,
            "start_line": s.start_line,
            "end_line": s.end_line,
            "language": s.language or event.language,
            "snapshot_id": s.snapshot_id or event.snapshot_id,
            "signature": s.signature,
            "docstring": s.docstring,
            "parent_node_id": s.parent_node_id,
            "parent_qualified_name": s.parent_qualified_name,
        }
        for ordinal, s in enumerate(event.symbols)
    ]
    relations = [
        {
            **key,
            **project,
            "ordinal": ordinal,
            "kind": r.kind,
            "source_node_id": r.source_node_id,
            "source_qualified_name": r.source_qualified_name,
            "target_name": r.target_name,
            "target_qualified_name": r.target_qualified_name,
            "target_node_id": r.target_node_id,
            "line": r.line,
        }
        for ordinal, r in enumerate(event.relations)
    ]
    dependencies = [
        {
            **key,
            **project,
            "ordinal": ordinal,
            "target_module": d.target_module,
            "target_file_id": d.target_file_id,
            "line": d.line,
        }
        for ordinal, d in enumerate(event.dependencies)
    ]
    return _PartRows(symbols, relations, dependencies)
