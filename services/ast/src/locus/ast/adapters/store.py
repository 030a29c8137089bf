"""The ast store: per file, its symbols, relations, dependencies and chunks. One SQLAlchemy
implementation for SQLite and PostgreSQL (portable SQL only).

Writes: files are replaced or retracted together in ONE transaction (``write_files``: the
files of a batch that are ready at once) that deletes every row of their ``file_id``s and
inserts the new ones, each table in one multi-row statement, so a redelivered event, a
duplicate or a crash mid-batch converges to the same rows. Each file keeps the ``snapshot_seq``
of the event that wrote it; an event with an older ``snapshot_seq`` changes nothing for that
file (the others of the transaction are written).

Reads: relation targets and file dependencies are resolved when read, by name, against the
symbols of the same project as they are now (a join, not a stored id): a target file that
arrives in a later batch, changes or is deleted is reflected at once, and concurrent writers
cannot leave a stale id behind. A qualified name defined in several files (a ``.py`` and its
``.pyi``) resolves to the definition in the referring file first, then to the smallest node id.

A deleted project keeps a tombstone, recorded in the transaction that deletes its rows; a write
of a tombstoned project changes nothing. Writes and project deletions take turns (one lock), so
a write never checks the tombstones before a deletion and writes after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from sqlalchemy import and_, case, delete, func, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from locus.ast.adapters.migrations import SCHEMA
from locus.ast.adapters.tables import (
    Base,
    ChunkRow,
    DeletedProjectRow,
    FileDependencyRow,
    FileRow,
    RelationRow,
    SymbolRow,
)
from locus.ast.domain import FileAnalysis
from locus.ast.domain.model import DECLARATION_KINDS
from locus.ast.identifiers import chunk_id_for, node_id_for
from locus.codepaths.includes import INCLUDE_LANGUAGES, IncludeDirectories, written_include
from locus.codepaths.namespaces import (
    GLOBAL_IMPORT_PREFIX,
    NAMESPACE_LOOKUP_LANGUAGES,
    namespace_candidates,
)
from locus.database import Database, DeletedProjects, slices, table_of
from locus.database.migrations import prepare_schema

T = TypeVar("T")
RowT = TypeVar("RowT", bound=Base)
MODULE_SEPARATOR = "."
_TYPE_KINDS = ("class", "interface", "struct", "enum", "trait")
_INSERT_ROWS = 2000  # rows per multi-row INSERT statement (executemany)
_INCOMING_SCAN_LIMIT = 5000
MAX_RE_EXPORT_HOPS = 4  # modules a re-exported name is followed through
MAX_RE_EXPORT_ALIASES = 200  # names a symbol is looked up under, its own included


@dataclass(frozen=True)
class FileVersion:
    """What a files.changed event says about one file."""

    file_id: str
    project_id: str
    source_id: str
    relative_path: str
    sha256: str
    language: str
    snapshot_id: str
    snapshot_seq: int
    job_id: str


@dataclass(frozen=True)
class ResolvedRelation:
    relation: RelationRow
    target_node_id: str  # "" when no symbol of the project has the target's qualified name


@dataclass(frozen=True)
class ResolvedDependency:
    source_file_id: str
    target_module: str
    target_file_id: str  # "" when no file of the project defines the module
    line: int


@dataclass(frozen=True, slots=True)
class OutlineSymbol:
    """A symbol as an outline lists it (no docstring)."""

    file_id: str
    node_id: str
    qualified_name: str
    scope_name: str
    name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    parent_node_id: str
    parent_qualified_name: str


_SYMBOLS = table_of(SymbolRow)
# Core columns (not the mapped attributes): rows come back as tuples, without the ORM's loading.
_OUTLINE_COLUMNS = tuple(_SYMBOLS.c[name] for name in OutlineSymbol.__slots__)


@dataclass(frozen=True)
class FileIndex:
    """Everything stored for one file, relations and dependencies resolved."""

    file: FileRow
    symbols: list[SymbolRow]
    relations: list[ResolvedRelation]
    dependencies: list[ResolvedDependency]
    chunks: list[ChunkRow]


@dataclass(frozen=True)
class FileWrite:
    """One file of a ``write_files`` transaction: replaced by ``analysis``, or retracted (a
    tombstone keeps its snapshot_seq) when there is none."""

    version: FileVersion
    analysis: FileAnalysis | None
    unsupported_language: bool = False


# What joins the segments of a qualified name in some language (`.`, C++/Rust/PHP `::`, a Go
# import path's `/`, PHP's `\`): a name written from one of them on names the symbol exactly.
_NAME_SEPARATORS = (".", "::", "/", "\\")


@dataclass(frozen=True)
class SymbolQuery:
    project_id: str
    text: str  # lowercase; "" matches every symbol
    kind: str  # "" = any
    path_prefix: str
    exact: bool
    name_end: bool = False  # with exact: the end of a qualified name after a separator counts
    without_signatures: bool = False  # leave out signatures, type aliases and constants


class AstStore:
    def __init__(self, database: Database, *, migrate_on_start: bool = True) -> None:
        self._db = database
        self._migrate_on_start = migrate_on_start
        self._deleted = DeletedProjects(DeletedProjectRow)
        self._writes = asyncio.Lock()  # file writes and project deletions take turns

    async def initialize(self) -> None:
        await prepare_schema(self._db, SCHEMA, migrate_on_start=self._migrate_on_start)

    async def close(self) -> None:
        await self._db.dispose()

    # writes

    async def stored_snapshot_seqs(self, file_ids: Sequence[str]) -> dict[str, int]:
        """file_id → the snapshot_seq stored for it (tombstones included); files never seen
        are absent."""
        found: dict[str, int] = {}
        async with self._db.sessions() as session:
            for batch in slices(sorted(set(file_ids))):
                rows = await session.execute(
                    select(FileRow.file_id, FileRow.snapshot_seq).where(FileRow.file_id.in_(batch))
                )
                found.update((file_id, int(seq)) for file_id, seq in rows)
        return found

    async def replace_file(
        self, version: FileVersion, analysis: FileAnalysis, *, unsupported_language: bool
    ) -> FileIndex | None:
        """Replace everything stored for the file and return it as stored, relations and
        dependencies resolved inside the same transaction; None (and no change) when the store
        already holds a newer snapshot of the file."""
        return (await self.write_files([FileWrite(version, analysis, unsupported_language)]))[0]

    async def retract_file(self, version: FileVersion) -> bool:
        """Delete everything of a deleted file, keeping a tombstone with its snapshot_seq; False
        (and no change) when the store already holds a newer snapshot of it."""
        return (await self.write_files([FileWrite(version, None)]))[0] is not None

    async def delete_project(self, project_id: str) -> int:
        """Delete every row of the project (files and their tombstones, symbols, relations,
        file dependencies, chunks) and record the project's tombstone, in one transaction; the
        number of files it had (0 when it is gone already, so a repeated deletion changes
        nothing)."""
        async with self._writes:
            async with self._db.transaction() as session:
                files = await session.scalar(
                    select(func.count())
                    .select_from(FileRow)
                    .where(FileRow.project_id == project_id)
                )
                for table in (ChunkRow, FileDependencyRow, RelationRow, SymbolRow, FileRow):
                    await session.execute(delete(table).where(table.project_id == project_id))
                await self._deleted.record(session, project_id)
            self._deleted.remember(project_id)
        return int(files or 0)

    async def deleted_projects(self, project_ids: Iterable[str]) -> set[str]:
        """The projects among ``project_ids`` that were deleted (tombstoned)."""
        async with self._db.sessions() as session:
            return await self._deleted.among(session, project_ids)

    async def write_files(self, writes: Sequence[FileWrite]) -> list[FileIndex | None]:
        """Replace or retract every file of ``writes`` (distinct file ids) in one transaction.
        Per write, in order: the file as stored (a retracted file: its tombstone and no rows),
        its relations and imports resolved as if the files had been committed one by one in
        this order (``_GroupDefinitions``), or None when the store holds a newer snapshot of
        that file or its project was deleted (nothing of it changes)."""
        file_ids = [w.version.file_id for w in writes]
        if len(set(file_ids)) != len(file_ids):
            raise ValueError("write_files: a file appears twice in one transaction")
        rows = [
            _rows_of(w.version, w.analysis, unsupported_language=w.unsupported_language)
            if w.analysis is not None
            else _tombstone_rows(w.version)
            for w in writes
        ]
        async with self._writes, self._db.transaction() as session:
            deleted = await self._deleted.among(session, {w.version.project_id for w in writes})
            stored = await _stored_seqs(session, [w.version.file_id for w in writes])
            allowed = {
                w.version.file_id
                for w in writes
                if stored.get(w.version.file_id, -1) <= w.version.snapshot_seq
                and w.version.project_id not in deleted
            }
            kept = [r for w, r in zip(writes, rows, strict=True) if w.version.file_id in allowed]
            visible = _GroupDefinitions(kept)
            for project_id in {str(r.file["project_id"]) for r in kept}:
                visible.add_stored(
                    project_id,
                    await _definitions_named(session, project_id, visible.names_of(project_id)),
                )
            await _delete_files(session, sorted(f for f in allowed if f in stored))
            for table, values in (
                (FileRow, [r.file for r in kept]),
                (SymbolRow, [v for r in kept for v in r.symbols]),
                (RelationRow, [v for r in kept for v in r.relations]),
                (FileDependencyRow, [v for r in kept for v in r.dependencies]),
                (ChunkRow, [v for r in kept for v in r.chunks]),
            ):
                for batch in slices(values, _INSERT_ROWS):
                    await session.execute(insert(table_of(table)), batch)
        # What was just written, as plain row objects (not read back), each file's relations
        # and imports resolved as if the files had been committed one by one in order.
        indexes: list[FileIndex | None] = []
        for r in rows:
            file_id = str(r.file["file_id"])
            if file_id not in allowed:
                indexes.append(None)
                continue
            file = _transient(FileRow, r.file)
            dependencies = [_transient(FileDependencyRow, values) for values in r.dependencies]
            indexes.append(
                FileIndex(
                    file=file,
                    symbols=[_transient(SymbolRow, values) for values in r.symbols],
                    relations=[
                        ResolvedRelation(relation, visible.target_of(relation))
                        for relation in (_transient(RelationRow, v) for v in r.relations)
                    ],
                    dependencies=_resolve_dependencies(
                        file,
                        dependencies,
                        visible.files_by_module(
                            file_id,
                            r.dependencies,
                            types_too=file.language not in INCLUDE_LANGUAGES,
                        ),
                        unmatched_candidates=True,
                    ),
                    chunks=[_transient(ChunkRow, values) for values in r.chunks],
                )
            )
        return indexes

    # reads

    async def file_index(self, file_id: str) -> FileIndex | None:
        async with self._db.sessions() as session:
            file = await session.get(FileRow, file_id)
            if file is None or file.deleted:
                return None
            symbols = list(
                await session.scalars(
                    select(SymbolRow)
                    .where(SymbolRow.file_id == file_id)
                    .order_by(SymbolRow.ordinal)
                )
            )
            relations = list(
                await session.scalars(
                    select(RelationRow)
                    .where(RelationRow.file_id == file_id)
                    .order_by(RelationRow.ordinal)
                )
            )
            chunks = list(
                await session.scalars(
                    select(ChunkRow).where(ChunkRow.file_id == file_id).order_by(ChunkRow.ordinal)
                )
            )
            return FileIndex(
                file=file,
                symbols=symbols,
                relations=await _resolve_relations(session, file.project_id, relations),
                dependencies=await _file_dependencies(session, file),
                chunks=chunks,
            )

    async def find_files(self, project_id: str, file_id: str, relative_path: str) -> list[FileRow]:
        """Live files of the project with this id, or else with this relative path (several
        sources of a project may hold the same path)."""
        async with self._db.sessions() as session:
            statement = select(FileRow).where(
                FileRow.project_id == project_id, FileRow.deleted.is_(False)
            )
            if file_id:
                statement = statement.where(FileRow.file_id == file_id)
            else:
                statement = statement.where(FileRow.relative_path == relative_path)
            return list(await session.scalars(statement.order_by(FileRow.file_id)))

    async def file_outline(
        self, file: FileRow, *, with_dependencies: bool = True
    ) -> tuple[list[SymbolRow], list[ResolvedDependency]]:
        """The file's symbols in source order and (unless left out) its resolved imports."""
        async with self._db.sessions() as session:
            symbols = list(
                await session.scalars(
                    select(SymbolRow)
                    .where(SymbolRow.file_id == file.file_id)
                    .order_by(SymbolRow.start_line, SymbolRow.ordinal)
                )
            )
            if not with_dependencies:
                return symbols, []
            return symbols, await _file_dependencies(session, file)

    async def symbol(self, node_id: str) -> tuple[SymbolRow, FileRow] | None:
        async with self._db.sessions() as session:
            row = (
                await session.execute(
                    select(SymbolRow, FileRow)
                    .join(FileRow, FileRow.file_id == SymbolRow.file_id)
                    .where(SymbolRow.node_id == node_id)
                )
            ).first()
            return None if row is None else (row[0], row[1])

    async def children(self, node_id: str) -> list[SymbolRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(SymbolRow)
                .where(SymbolRow.parent_node_id == node_id)
                .order_by(SymbolRow.start_line, SymbolRow.ordinal)
            )
            return list(rows)

    async def symbols_and_ancestors(
        self, node_ids: Iterable[str], *, with_ancestors: bool = True
    ) -> dict[str, SymbolRow]:
        """The symbols ``node_ids`` and (unless left out) every enclosing symbol of theirs, by
        node id: a query per nesting level, never a whole file's symbols."""
        found: dict[str, SymbolRow] = {}
        wanted = {node_id for node_id in node_ids if node_id}
        asked: set[str] = set()
        async with self._db.sessions() as session:
            while wanted:
                asked |= wanted
                for batch in slices(sorted(wanted)):
                    for row in await session.scalars(
                        select(SymbolRow).where(SymbolRow.node_id.in_(batch))
                    ):
                        found[row.node_id] = row
                if not with_ancestors:
                    break
                # A parent missing (its file re-indexed meanwhile) is asked for once only.
                wanted = {row.parent_node_id for row in found.values() if row.parent_node_id}
                wanted -= asked
        return found

    async def outline_symbols(
        self, project_id: str, file_ids: Sequence[str], kinds: Sequence[str], limit_per_file: int
    ) -> dict[str, tuple[FileRow, list[OutlineSymbol]]]:
        """Live files of the project among ``file_ids`` (file id → the file and its symbols of
        ``kinds``, all kinds when empty, the first ``limit_per_file`` in source order, all when
        0), in one query per batch of files. Plain rows, docstrings left out: what an outline
        lists costs a tenth of the mapped objects."""
        found: dict[str, tuple[FileRow, list[OutlineSymbol]]] = {}
        async with self._db.sessions() as session:
            for batch in slices(sorted(set(file_ids))):
                for file in await session.scalars(
                    select(FileRow).where(
                        FileRow.project_id == project_id,
                        FileRow.file_id.in_(batch),
                        FileRow.deleted.is_(False),
                    )
                ):
                    found[file.file_id] = (file, [])
            columns = _SYMBOLS.c
            for batch in slices(sorted(found)):
                statement = select(*_OUTLINE_COLUMNS).where(columns.file_id.in_(batch))
                if kinds:
                    statement = statement.where(columns.kind.in_(sorted(set(kinds))))
                rows = await session.execute(
                    statement.order_by(columns.file_id, columns.start_line, columns.ordinal)
                )
                for row in rows.tuples():
                    symbols = found[row[0]][1]
                    if not limit_per_file or len(symbols) < limit_per_file:
                        symbols.append(OutlineSymbol(*row))
        return found

    async def relations_of(
        self, symbols: Sequence[SymbolRow], limit: int
    ) -> dict[str, tuple[list[ResolvedRelation], list[ResolvedRelation]]]:
        """``outgoing`` and ``incoming`` of many symbols at once (node id → both lists, the
        same as those methods give one by one), in a few queries whatever their number."""
        wanted = {symbol.node_id: symbol for symbol in symbols}
        if not wanted:
            return {}
        result: dict[str, tuple[list[ResolvedRelation], list[ResolvedRelation]]] = {
            node_id: ([], []) for node_id in wanted
        }
        async with self._db.sessions() as session:
            outgoing_rows: list[RelationRow] = []
            for batch in slices(sorted(wanted)):
                outgoing_rows += await _first_per_group(
                    session,
                    RelationRow.source_node_id,
                    RelationRow.source_node_id.in_(batch),
                    limit,
                )
            by_project: dict[str, set[str]] = {}
            for symbol in wanted.values():
                by_project.setdefault(symbol.project_id, set()).add(symbol.qualified_name)
            # Names modules re-export a wanted symbol under (`@acme/ui.Button` for
            # `@acme/ui/src/button.Button`): relations written with them are incoming too.
            aliases: dict[tuple[str, str], set[str]] = {}
            for project_id, names in by_project.items():
                for alias, originals in (await _re_exported_as(session, project_id, names)).items():
                    aliases[(project_id, alias)] = originals
            for project_id, alias in aliases:
                by_project[project_id].add(alias)
            incoming_rows: list[RelationRow] = []
            for project_id, names in by_project.items():
                # A name only one symbol has resolves every relation to it: its first `limit`
                # relations are the answer. A shared name (overloads, redefinitions) needs the
                # longer scan, since relations resolve to either symbol.
                unique = await _unique_names(session, project_id, names)
                for scan, group in ((limit, unique), (_INCOMING_SCAN_LIMIT, names - unique)):
                    for batch in slices(sorted(group)):
                        incoming_rows += await _first_per_group(
                            session,
                            RelationRow.target_qualified_name,
                            and_(
                                RelationRow.project_id == project_id,
                                RelationRow.target_qualified_name.in_(batch),
                            ),
                            scan,
                        )
            resolved_out: list[ResolvedRelation] = []
            resolved_in: list[ResolvedRelation] = []
            for project_id in by_project:
                out = [r for r in outgoing_rows if r.project_id == project_id]
                into = [r for r in incoming_rows if r.project_id == project_id]
                both = await _resolve_relations(session, project_id, out + into)
                resolved_out += both[: len(out)]
                resolved_in += both[len(out) :]
        for item in resolved_out:
            result[item.relation.source_node_id][0].append(item)
        by_name: dict[tuple[str, str], list[str]] = {}
        for symbol in wanted.values():
            by_name.setdefault((symbol.project_id, symbol.qualified_name), []).append(
                symbol.node_id
            )
        for (project_id, alias), originals in aliases.items():
            for original in sorted(originals):
                by_name.setdefault((project_id, alias), []).extend(
                    by_name.get((project_id, original), [])
                )
        for item in resolved_in:
            relation = item.relation
            for node_id in by_name.get((relation.project_id, relation.target_qualified_name), []):
                if item.target_node_id == node_id and len(result[node_id][1]) < limit:
                    result[node_id][1].append(item)
        return result

    async def outgoing(self, node_id: str, limit: int) -> list[ResolvedRelation]:
        async with self._db.sessions() as session:
            rows = list(
                await session.scalars(
                    select(RelationRow)
                    .where(RelationRow.source_node_id == node_id)
                    .order_by(RelationRow.file_id, RelationRow.ordinal)
                    .limit(limit)
                )
            )
            if not rows:
                return []
            return await _resolve_relations(session, rows[0].project_id, rows)

    async def incoming(self, symbol: SymbolRow, limit: int) -> list[ResolvedRelation]:
        """Relations of the project whose target resolves to this symbol, under its own name or
        one a module re-exports it under."""
        async with self._db.sessions() as session:
            aliases = await _re_exported_as(session, symbol.project_id, [symbol.qualified_name])
            rows = list(
                await session.scalars(
                    select(RelationRow)
                    .where(
                        RelationRow.project_id == symbol.project_id,
                        RelationRow.target_qualified_name.in_(
                            [symbol.qualified_name, *sorted(aliases)]
                        ),
                    )
                    .order_by(RelationRow.file_id, RelationRow.ordinal)
                    .limit(_INCOMING_SCAN_LIMIT)
                )
            )
            resolved = await _resolve_relations(session, symbol.project_id, rows)
        return [r for r in resolved if r.target_node_id == symbol.node_id][:limit]

    async def find_symbols(
        self, query: SymbolQuery, offset: int, limit: int
    ) -> list[tuple[SymbolRow, FileRow]]:
        """Symbols whose name or qualified name matches, case-insensitively: exact matches
        first (the name, the qualified name, and with ``name_end`` its end after a separator:
        `Invoice.total` for `com.acme.billing.Invoice.total`), then prefix matches, then
        substring matches; ties by qualified name."""
        text = query.text
        exact = or_(
            SymbolRow.name_lower == text,
            SymbolRow.qualified_name_lower == text,
            *(
                SymbolRow.qualified_name_lower.endswith(separator + text, autoescape=True)
                for separator in (_NAME_SEPARATORS if query.name_end else ())
            ),
        )
        prefix = or_(
            SymbolRow.name_lower.startswith(text, autoescape=True),
            SymbolRow.qualified_name_lower.startswith(text, autoescape=True),
        )
        statement = (
            select(SymbolRow, FileRow)
            .join(FileRow, FileRow.file_id == SymbolRow.file_id)
            .where(SymbolRow.project_id == query.project_id)
        )
        if query.exact:
            statement = statement.where(exact)
        elif text:
            statement = statement.where(
                or_(
                    SymbolRow.name_lower.contains(text, autoescape=True),
                    SymbolRow.qualified_name_lower.contains(text, autoescape=True),
                )
            )
        if query.kind:
            statement = statement.where(SymbolRow.kind == query.kind)
        if query.without_signatures:
            statement = statement.where(SymbolRow.kind.not_in(sorted(DECLARATION_KINDS)))
        if query.path_prefix:
            statement = statement.where(
                FileRow.relative_path.startswith(query.path_prefix, autoescape=True)
            )
        rank = case((exact, 0), (prefix, 1), else_=2)
        statement = (
            statement.order_by(rank, SymbolRow.qualified_name, SymbolRow.node_id)
            .offset(offset)
            .limit(limit)
        )
        async with self._db.sessions() as session:
            return [(row[0], row[1]) for row in await session.execute(statement)]

    async def chunks(
        self, project_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, tuple[ChunkRow, FileRow]]:
        found: dict[str, tuple[ChunkRow, FileRow]] = {}
        async with self._db.sessions() as session:
            for batch in slices(sorted(set(chunk_ids))):
                rows = await session.execute(
                    select(ChunkRow, FileRow)
                    .join(FileRow, FileRow.file_id == ChunkRow.file_id)
                    .where(ChunkRow.project_id == project_id, ChunkRow.chunk_id.in_(batch))
                )
                for chunk, file in rows:
                    found[chunk.chunk_id] = (chunk, file)
        return found

    async def first_chunks(self, project_id: str, node_ids: Sequence[str]) -> dict[str, ChunkRow]:
        """Per symbol of the project: its first chunk (lowest ordinal in its file), found
        through the symbols' files (the chunks' file_id index)."""
        found: dict[str, ChunkRow] = {}
        async with self._db.sessions() as session:
            for batch in slices(sorted(set(node_ids))):
                files = select(SymbolRow.file_id).where(
                    SymbolRow.project_id == project_id, SymbolRow.node_id.in_(batch)
                )
                rows = await session.scalars(
                    select(ChunkRow)
                    .where(
                        ChunkRow.project_id == project_id,
                        ChunkRow.file_id.in_(files),
                        ChunkRow.symbol_node_id.in_(batch),
                    )
                    .order_by(ChunkRow.file_id, ChunkRow.ordinal)
                )
                for chunk in rows:
                    found.setdefault(chunk.symbol_node_id, chunk)
        return found

    async def files(self, file_ids: Iterable[str]) -> dict[str, FileRow]:
        found: dict[str, FileRow] = {}
        async with self._db.sessions() as session:
            for batch in slices(sorted(set(file_ids))):
                for row in await session.scalars(select(FileRow).where(FileRow.file_id.in_(batch))):
                    found[row.file_id] = row
        return found


@dataclass(frozen=True)
class _FileRows:
    file: dict[str, object]
    symbols: list[dict[str, object]]
    relations: list[dict[str, object]]
    dependencies: list[dict[str, object]]
    chunks: list[dict[str, object]]


def _rows_of(
    version: FileVersion, analysis: FileAnalysis, *, unsupported_language: bool
) -> _FileRows:
    """The table rows of one analysed file, with its deterministic node and chunk ids."""
    file_id = version.file_id
    node_ids = {
        symbol.qualified_name: node_id_for(file_id, symbol.qualified_name, symbol.kind)
        for symbol in analysis.symbols
    }
    symbols = [
        {
            "node_id": node_ids[symbol.qualified_name],
            "project_id": version.project_id,
            "file_id": file_id,
            "ordinal": ordinal,
            "qualified_name": symbol.qualified_name,
            "qualified_name_lower": symbol.qualified_name.lower(),
            "scope_name": symbol.scope_name,
            "name": symbol.name,
            "name_lower": symbol.name.lower(),
            "kind": symbol.kind,
            "start_line": symbol.start_line,
            "end_line": symbol.end_line,
            "signature": symbol.signature,
            "docstring": symbol.docstring or "",
            "parent_node_id": node_ids.get(symbol.parent_qualified_name or "", ""),
            "parent_qualified_name": symbol.parent_qualified_name or "",
        }
        for ordinal, symbol in enumerate(analysis.symbols)
    ]
    relations = [
        {
            "file_id": file_id,
            "ordinal": ordinal,
            "project_id": version.project_id,
            "kind": relation.kind,
            "source_node_id": node_ids.get(relation.source_qualified_name, ""),
            "source_qualified_name": relation.source_qualified_name,
            "target_name": relation.target_name,
            "target_qualified_name": relation.target_qualified_name or "",
            "line": relation.line,
        }
        for ordinal, relation in enumerate(analysis.relations)
    ]
    dependencies = [
        {
            "file_id": file_id,
            "ordinal": ordinal,
            "project_id": version.project_id,
            "target_module": dependency.target_module,
            "imported_names": "\n".join(dependency.imported_names),
            "line": dependency.line,
        }
        for ordinal, dependency in enumerate(analysis.dependencies)
    ]
    chunks = [
        {
            "chunk_id": chunk_id_for(file_id, chunk.ordinal, chunk.content_sha256),
            "project_id": version.project_id,
            "file_id": file_id,
            "ordinal": chunk.ordinal,
            "kind": chunk.kind,
            "symbol_node_id": node_ids.get(chunk.symbol_qualified_name or "", ""),
            "symbol_qualified_name": chunk.symbol_qualified_name or "",
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "text": chunk.text,
            "content_sha256": chunk.content_sha256,
        }
        for chunk in analysis.chunks
    ]
    file_row = _file_values(version) | {
        "module_name": analysis.module_name,
        "unsupported_language": unsupported_language,
        "parse_errors": analysis.parse_errors,
        "deleted": False,
    }
    return _FileRows(file_row, symbols, relations, dependencies, chunks)


def _tombstone_rows(version: FileVersion) -> _FileRows:
    """A deleted file: its row marked deleted (keeping the snapshot_seq), nothing else."""
    tombstone = _file_values(version) | {
        "sha256": "",
        "module_name": "",
        "unsupported_language": False,
        "parse_errors": 0,
        "deleted": True,
    }
    return _FileRows(tombstone, [], [], [], [])


class _Written:
    """A row as just written, read like the mapped row it was written from (its values are
    its attributes). Not an ORM object: the ORM's instance state costs about 3 µs a row (32
    through the mapped ``__init__``), and a large file has thousands of relations."""

    def __init__(self, values: dict[str, object]) -> None:
        self.__dict__ = values


def _transient(model: type[RowT], values: dict[str, object]) -> RowT:
    """``values`` as a written row of ``model``: only its attributes are read."""
    return cast(RowT, _Written(values))


def _file_values(version: FileVersion) -> dict[str, object]:
    return {
        "file_id": version.file_id,
        "project_id": version.project_id,
        "source_id": version.source_id,
        "relative_path": version.relative_path,
        "sha256": version.sha256,
        "language": version.language,
        "snapshot_id": version.snapshot_id,
        "snapshot_seq": version.snapshot_seq,
        "job_id": version.job_id,
    }


async def _stored_seqs(session: AsyncSession, file_ids: Sequence[str]) -> dict[str, int]:
    """The snapshot_seq stored for each of ``file_ids`` that is stored, rows locked for the
    transaction (FOR UPDATE serializes writers of one file on PostgreSQL; SQLite has one
    writer anyway)."""
    stored: dict[str, int] = {}
    for batch in slices(sorted(file_ids)):
        rows = await session.execute(
            select(FileRow.file_id, FileRow.snapshot_seq)
            .where(FileRow.file_id.in_(batch))
            .with_for_update()
        )
        stored.update((file_id, int(seq)) for file_id, seq in rows)
    return stored


async def _delete_files(session: AsyncSession, file_ids: Sequence[str]) -> None:
    for batch in slices(file_ids):
        for table in (ChunkRow, FileDependencyRow, RelationRow, SymbolRow, FileRow):
            await session.execute(delete(table).where(table.file_id.in_(batch)))


@dataclass(frozen=True, slots=True)
class _Definition:
    qualified_name: str
    file_id: str
    node_id: str
    kind: str


async def _definitions_named(
    session: AsyncSession, project_id: str, names: Sequence[str]
) -> list[_Definition]:
    found: list[_Definition] = []
    for batch in slices(names):
        rows = await session.execute(
            select(
                SymbolRow.qualified_name, SymbolRow.file_id, SymbolRow.node_id, SymbolRow.kind
            ).where(SymbolRow.project_id == project_id, SymbolRow.qualified_name.in_(batch))
        )
        found.extend(_Definition(*row) for row in rows)
    return found


class _GroupDefinitions:
    """The symbols each file of a group commit resolves its relations and imports against:
    exactly what committing the files one by one, in order, would show the k-th file — the
    project as stored before the group, where the group's files up to k have their new rows
    instead of their stored ones and the later ones still have their stored ones. So the
    resolution does not depend on how the files were grouped (which depends on timing)."""

    _LAST = 1 << 62

    def __init__(self, kept: Sequence[_FileRows]) -> None:
        self._position = {str(r.file["file_id"]): k for k, r in enumerate(kept)}
        self._project = {str(r.file["file_id"]): str(r.file["project_id"]) for r in kept}
        # name → (first, last position that sees it, definition)
        self._named: dict[tuple[str, str], list[tuple[int, int, _Definition]]] = {}
        self._wanted: dict[str, set[str]] = {}
        for r in kept:
            project_id = str(r.file["project_id"])
            wanted = self._wanted.setdefault(project_id, set())
            wanted.update(str(v["target_qualified_name"]) for v in r.relations)
            for dependency in r.dependencies:
                wanted.update(
                    _candidate_modules(
                        str(dependency["target_module"]), str(dependency["imported_names"])
                    )
                )
            first = self._position[str(r.file["file_id"])]
            for v in r.symbols:
                definition = _Definition(
                    str(v["qualified_name"]), str(v["file_id"]), str(v["node_id"]), str(v["kind"])
                )
                self._add(project_id, definition, first, self._LAST)

    def names_of(self, project_id: str) -> list[str]:
        return sorted(name for name in self._wanted.get(project_id, ()) if name)

    def add_stored(self, project_id: str, definitions: Sequence[_Definition]) -> None:
        """Symbols of the project as stored before the group: a group file's are seen by the
        files before it only (it replaces them)."""
        for definition in definitions:
            replaced_at = self._position.get(definition.file_id)
            last = self._LAST if replaced_at is None else replaced_at - 1
            self._add(project_id, definition, 0, last)

    def _add(self, project_id: str, definition: _Definition, first: int, last: int) -> None:
        if first <= last:
            key = (project_id, definition.qualified_name)
            self._named.setdefault(key, []).append((first, last, definition))

    def _seen_by(self, file_id: str, name: str) -> list[_Definition]:
        k = self._position[file_id]
        named = self._named.get((self._project[file_id], name), [])
        return [definition for first, last, definition in named if first <= k <= last]

    def target_of(self, relation: RelationRow) -> str:
        """The node a relation's target names: in the referring file first, else the
        smallest node id ("" when none)."""
        name = relation.target_qualified_name
        options = self._seen_by(relation.file_id, name) if name else []
        return _preferred_target([(d.file_id, d.node_id) for d in options], relation.file_id)

    def files_by_module(
        self, file_id: str, dependencies: Sequence[Mapping[str, object]], types_too: bool = True
    ) -> dict[str, list[str]]:
        """``_module_files`` for one file of the group, from what it sees."""
        return _files_by_module(dependencies, lambda name: self._seen_by(file_id, name), types_too)


def _preferred_target(options: Sequence[tuple[str, str]], own_file: str) -> str:
    """Of the (file id, node id) definitions of a relation's target, the one in the referring
    file first, else the smallest node id ("" when there is none)."""
    if not options:
        return ""
    return min(options, key=lambda option: (option[0] != own_file, option[1]))[1]


def _files_by_module(
    dependencies: Sequence[Mapping[str, object]],
    named: Callable[[str], Sequence[_Definition]],
    types_too: bool = True,
) -> dict[str, list[str]]:
    """Module name → files defining it, for every candidate module of ``dependencies``
    (``named``: the definitions of a qualified name). ``types_too``: an import may name a type
    (not so a C/C++ include, which names a path: `<ostream>` is no `class ostream`)."""
    candidates_per_import = [
        _candidate_modules(str(d["target_module"]), str(d["imported_names"])) for d in dependencies
    ]
    files_by_module: dict[str, list[str]] = {}
    for module in sorted({m for candidates in candidates_per_import for m in candidates}):
        files = [d.file_id for d in named(module) if d.kind == "module"]
        if files:
            files_by_module[module] = files
    if not types_too:
        return files_by_module
    # Languages that import types rather than files (Java `import a.b.Foo`): an import none of
    # whose candidate names is a module resolves to the file(s) defining a type of that name.
    missing = sorted(
        {
            module
            for candidates in candidates_per_import
            if not any(candidate in files_by_module for candidate in candidates)
            for module in candidates
        }
    )
    for module in missing:
        for definition in named(module):
            if definition.kind in _TYPE_KINDS:
                files = files_by_module.setdefault(module, [])
                if definition.file_id not in files:
                    files.append(definition.file_id)
    return files_by_module


async def _resolve_relations(
    session: AsyncSession, project_id: str, relations: Sequence[RelationRow]
) -> list[ResolvedRelation]:
    names = sorted({r.target_qualified_name for r in relations if r.target_qualified_name})
    candidates: dict[str, list[tuple[str, str]]] = {}
    for batch in slices(names):
        rows = await session.execute(
            select(SymbolRow.qualified_name, SymbolRow.file_id, SymbolRow.node_id).where(
                SymbolRow.project_id == project_id, SymbolRow.qualified_name.in_(batch)
            )
        )
        for qualified_name, file_id, node_id in rows:
            candidates.setdefault(qualified_name, []).append((file_id, node_id))
    missing = [name for name in names if name not in candidates]
    candidates.update(await _through_re_exports(session, project_id, missing))
    unresolved = [r for r in relations if r.target_qualified_name not in candidates]
    guessed = await _through_namespaces(
        session, project_id, [r for r in unresolved if r.target_qualified_name]
    )
    resolved: list[ResolvedRelation] = []
    for relation in relations:
        options = candidates.get(relation.target_qualified_name) or guessed.get(
            (relation.file_id, relation.ordinal), []
        )
        resolved.append(ResolvedRelation(relation, _preferred_target(options, relation.file_id)))
    return resolved


async def _through_namespaces(
    session: AsyncSession, project_id: str, relations: Sequence[RelationRow]
) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """(file id, ordinal) of each relation of a C# file whose target names nothing → the
    definitions of the first of C#'s other guesses that exists (``namespace_candidates``:
    enclosing namespaces, the file's ``using`` namespaces and the project's ``global using``
    ones, the global namespace)."""
    if not relations:
        return {}
    files = sorted({r.file_id for r in relations})
    lookup_files: set[str] = set()
    for batch in slices(files):
        rows = await session.execute(
            select(FileRow.file_id).where(
                FileRow.file_id.in_(batch),
                FileRow.language.in_(sorted(NAMESPACE_LOOKUP_LANGUAGES)),
            )
        )
        lookup_files.update(file_id for (file_id,) in rows)
    if not lookup_files:
        return {}
    usings: dict[str, list[str]] = {}
    for batch in slices(sorted(lookup_files)):
        imported = await session.execute(
            select(RelationRow.file_id, RelationRow.target_qualified_name)
            .where(
                RelationRow.file_id.in_(batch),
                RelationRow.kind == "imports",
                RelationRow.target_name.like("%*"),
                RelationRow.target_qualified_name != "",
            )
            .order_by(RelationRow.file_id, RelationRow.ordinal)
        )
        for file_id, namespace in imported:
            usings.setdefault(file_id, []).append(namespace)
    everywhere = await session.scalars(
        select(RelationRow.target_qualified_name)
        .where(
            RelationRow.project_id == project_id,
            RelationRow.kind == "imports",
            RelationRow.target_name.like(f"{GLOBAL_IMPORT_PREFIX}%*"),
            RelationRow.target_qualified_name != "",
        )
        .order_by(RelationRow.file_id, RelationRow.ordinal)
    )
    global_usings = list(dict.fromkeys(everywhere))  # `global using`: every file takes them
    guesses = {
        (r.file_id, r.ordinal): namespace_candidates(
            r.target_qualified_name, r.target_name, [*usings.get(r.file_id, []), *global_usings]
        )
        for r in relations
        if r.file_id in lookup_files
    }
    wanted = sorted({name for names in guesses.values() for name in names})
    defined: dict[str, list[tuple[str, str]]] = {}
    for definition in await _definitions_named(session, project_id, wanted):
        defined.setdefault(definition.qualified_name, []).append(
            (definition.file_id, definition.node_id)
        )
    found: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for key, names in guesses.items():
        for name in names:
            if name in defined:
                found[key] = defined[name]
                break
    return found


async def _file_dependencies(session: AsyncSession, file: FileRow) -> list[ResolvedDependency]:
    rows = list(
        await session.scalars(
            select(FileDependencyRow)
            .where(FileDependencyRow.file_id == file.file_id)
            .order_by(FileDependencyRow.ordinal)
        )
    )
    values = [{"target_module": r.target_module, "imported_names": r.imported_names} for r in rows]
    files_by_module = await _module_files(
        session, file.project_id, values, types_too=file.language not in INCLUDE_LANGUAGES
    )
    elsewhere = (
        await _through_include_directories(session, file, rows, files_by_module)
        if file.language in INCLUDE_LANGUAGES
        else {}
    )
    return _resolve_dependencies(file, rows, files_by_module, elsewhere)


# File names per query when looking for headers by name: one LIKE term each (SQLite parses a
# chain of ORs as a tree as deep as it is long; its limit is 1,000).
_NAMES_PER_LIKE_QUERY = 50


async def _through_include_directories(
    session: AsyncSession,
    file: FileRow,
    rows: Sequence[FileDependencyRow],
    files_by_module: Mapping[str, list[str]],
) -> dict[str, list[tuple[str, str]]]:
    """The C/C++ includes of ``rows`` that name no file beside their includer (not in
    ``files_by_module``) or are angle includes, resolved through the project's directories
    (``locus.codepaths.includes``): module → (path, file id) of each file found. Of several
    files at one path (the project has several sources) the includer's source's is taken."""
    missing = sorted(
        {
            r.target_module
            for r in rows
            if r.target_module and r.target_module not in files_by_module
        }
    )
    if not missing:
        return {}
    names = sorted({written_include(m, file.relative_path).rsplit("/", 1)[-1] for m in missing})
    files_at: dict[str, list[tuple[str, str]]] = {}  # path → (file id, source id)
    for batch in slices(names, _NAMES_PER_LIKE_QUERY):
        named = [FileRow.relative_path.in_(batch)] + [
            FileRow.relative_path.endswith(f"/{name}", autoescape=True) for name in batch
        ]
        found_rows = await session.execute(
            select(FileRow.relative_path, FileRow.file_id, FileRow.source_id).where(
                FileRow.project_id == file.project_id, FileRow.deleted.is_(False), or_(*named)
            )
        )
        for path, file_id, source_id in found_rows:
            files_at.setdefault(str(path), []).append((str(file_id), str(source_id)))
    directories = IncludeDirectories(files_at)
    found: dict[str, list[tuple[str, str]]] = {}
    for module in missing:
        for path in directories.targets(module, file.relative_path):
            candidates = files_at[path]
            own = [c for c in candidates if c[1] == file.source_id] or candidates
            found.setdefault(module, []).extend((path, file_id) for file_id, _ in sorted(own))
    return found


def _candidate_modules(target_module: str, imported_names: str) -> list[str]:
    """The imported module and, for ``from module import name``, the submodule it may be."""
    names = [name for name in imported_names.split("\n") if name]
    return [target_module, *(f"{target_module}{MODULE_SEPARATOR}{name}" for name in names)]


async def _module_files(
    session: AsyncSession,
    project_id: str,
    dependencies: Sequence[Mapping[str, object]],
    types_too: bool = True,
) -> dict[str, list[str]]:
    """Module name → files of the project defining it, for every candidate module."""
    names = sorted(
        {
            module
            for d in dependencies
            for module in _candidate_modules(str(d["target_module"]), str(d["imported_names"]))
        }
    )
    named: dict[str, list[_Definition]] = {}
    for definition in await _definitions_named(session, project_id, names):
        named.setdefault(definition.qualified_name, []).append(definition)
    return _files_by_module(dependencies, lambda name: named.get(name, []), types_too)


def _resolve_dependencies(
    file: FileRow,
    rows: Sequence[FileDependencyRow],
    files_by_module: dict[str, list[str]],
    elsewhere: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    *,
    unmatched_candidates: bool = False,
) -> list[ResolvedDependency]:
    """One entry per (module, file defining it); a self-import (``from . import x`` in the
    package's own module) is left out; an import no file defines stays with target "" unless
    ``elsewhere`` found it under another name (a C include through an include directory: the
    entry names the module found).

    ``unmatched_candidates`` (what files.parsed publishes, resolved against the files stored
    when the file was parsed): where some candidate of an import matched, every other one is
    an entry with target "" too, which impact resolves by name when it builds the graph. So
    `from pkg import sub` links `pkg/__init__` whether or not it was stored before the importer
    was parsed (a crash's redelivery changes that order)."""
    resolved: list[ResolvedDependency] = []
    for row in rows:
        matched = False
        missing: list[str] = []
        for module in _candidate_modules(row.target_module, row.imported_names):
            targets = sorted(files_by_module.get(module, []))
            if not targets:
                missing.append(module)
            for target_file_id in targets:
                matched = True
                if target_file_id != file.file_id:
                    resolved.append(
                        ResolvedDependency(file.file_id, module, target_file_id, row.line)
                    )
        if matched and unmatched_candidates:
            resolved.extend(
                ResolvedDependency(file.file_id, module, "", row.line) for module in missing
            )
        if not matched:
            found = (elsewhere or {}).get(row.target_module, ())
            resolved.extend(
                ResolvedDependency(file.file_id, path, target_file_id, row.line)
                for path, target_file_id in found
            )
            if not found:
                resolved.append(ResolvedDependency(file.file_id, row.target_module, "", row.line))
    return resolved


def _name_prefixes(name: str) -> list[str]:
    """`a.b.c` → [`a.b`, `a`]: the names a module holding it may have, innermost first."""
    parts = name.split(MODULE_SEPARATOR)
    return [MODULE_SEPARATOR.join(parts[:cut]) for cut in range(len(parts) - 1, 0, -1)]


# A module's imports as re-exports: local name → what it names, and its wildcard imports.
_ReExports = tuple[dict[str, str], list[str]]
# An import relation as re-exports read it: the importing module, the name as written
# (`./button.*` for a wildcard) and what it names.
_IMPORT_COLUMNS = (
    RelationRow.source_qualified_name,
    RelationRow.target_name,
    RelationRow.target_qualified_name,
)


async def _module_re_exports(
    session: AsyncSession, project_id: str, modules: set[str]
) -> dict[str, _ReExports]:
    """For each of ``modules`` a live file of the project defines: its module-level imports,
    the names they bind (``export { Button } from './button'``, ``from .client import
    Client``) and the modules whose every name they take (``export * from './card'``)."""
    found: dict[str, _ReExports] = {}
    for batch in slices(sorted(modules)):
        rows = await session.execute(
            select(*_IMPORT_COLUMNS)
            .join(FileRow, FileRow.file_id == RelationRow.file_id)
            .where(
                FileRow.project_id == project_id,
                FileRow.module_name.in_(batch),
                FileRow.deleted.is_(False),
                RelationRow.kind == "imports",
                RelationRow.source_qualified_name == FileRow.module_name,
                RelationRow.target_qualified_name != "",
            )
            .order_by(RelationRow.file_id, RelationRow.ordinal)
        )
        for module, written, target in rows:
            named, wildcards = found.setdefault(module, ({}, []))
            if written.endswith("*"):
                if target not in wildcards:
                    wildcards.append(target)
            else:
                named.setdefault(written.rsplit(MODULE_SEPARATOR, 1)[-1] or target, target)
    return found


def _re_exported_names(name: str, modules: Mapping[str, _ReExports]) -> list[str]:
    """What ``name`` may stand for one module further: its innermost module's named import of
    the next segment, else that module's wildcard imports, in order."""
    parts = name.split(MODULE_SEPARATOR)
    for cut in range(len(parts) - 1, 0, -1):
        module = MODULE_SEPARATOR.join(parts[:cut])
        if module not in modules:
            continue
        named, wildcards = modules[module]
        target = named.get(parts[cut])
        if target is not None:
            return [MODULE_SEPARATOR.join([target, *parts[cut + 1 :]])]
        return [MODULE_SEPARATOR.join([star, *parts[cut:]]) for star in wildcards]
    return []


async def _through_re_exports(
    session: AsyncSession, project_id: str, names: Sequence[str]
) -> dict[str, list[tuple[str, str]]]:
    """Names no symbol has → the (file id, node id) definitions their modules' re-exports
    reach (``@acme/ui.Button`` through ``export * from './button'`` in ``@acme/ui``'s index
    file → ``@acme/ui/src/button.Button``): breadth first over at most
    ``MAX_RE_EXPORT_HOPS`` modules, a named import before the wildcards, the first found kept."""
    found: dict[str, list[tuple[str, str]]] = {}
    pending = [(name, name) for name in names]
    seen = set(pending)
    for _ in range(MAX_RE_EXPORT_HOPS):
        modules = {module for alias, _ in pending for module in _name_prefixes(alias)}
        if not modules:
            break
        re_exports = await _module_re_exports(session, project_id, modules)
        following: list[tuple[str, str]] = []
        for alias, original in pending:
            for further in _re_exported_names(alias, re_exports):
                if (further, original) not in seen:
                    seen.add((further, original))
                    following.append((further, original))
        definitions = await _definitions_named(
            session, project_id, sorted({alias for alias, _ in following})
        )
        by_name: dict[str, list[tuple[str, str]]] = {}
        for definition in definitions:
            by_name.setdefault(definition.qualified_name, []).append(
                (definition.file_id, definition.node_id)
            )
        for alias, original in following:
            if original not in found and alias in by_name:
                found[original] = by_name[alias]
        pending = [(alias, original) for alias, original in following if original not in found]
        if not pending:
            break
    return found


async def _re_exported_as(
    session: AsyncSession, project_id: str, names: Iterable[str]
) -> dict[str, set[str]]:
    """The other names under which modules re-export each of ``names`` (the reverse of
    ``_through_re_exports``): alias → the names it stands for, at most
    ``MAX_RE_EXPORT_HOPS`` modules away and ``MAX_RE_EXPORT_ALIASES`` aliases in all."""
    aliases: dict[str, set[str]] = {}
    level = [(name, name) for name in names]
    seen = {name for name, _ in level}
    for _ in range(MAX_RE_EXPORT_HOPS):
        prefixes: dict[str, list[tuple[str, str]]] = {}
        for alias, original in level:
            for prefix in [alias, *_name_prefixes(alias)]:
                prefixes.setdefault(prefix, []).append((alias, original))
        following: list[tuple[str, str]] = []
        for batch in slices(sorted(prefixes)):
            rows = await session.execute(
                select(*_IMPORT_COLUMNS).where(
                    RelationRow.project_id == project_id,
                    RelationRow.kind == "imports",
                    RelationRow.target_qualified_name.in_(batch),
                )
            )
            for module, written, target in rows:
                local = (
                    ""
                    if written.endswith("*")
                    else MODULE_SEPARATOR + written.rsplit(MODULE_SEPARATOR, 1)[-1]
                )
                for alias, original in prefixes[target]:
                    further = module + local + alias[len(target) :]
                    if further not in seen and len(seen) < MAX_RE_EXPORT_ALIASES:
                        seen.add(further)
                        aliases.setdefault(further, set()).add(original)
                        following.append((further, original))
        level = following
        if not level:
            break
    return aliases


async def _unique_names(session: AsyncSession, project_id: str, names: set[str]) -> set[str]:
    """The qualified names exactly one symbol of the project has."""
    unique: set[str] = set()
    for batch in slices(sorted(names)):
        counted = await session.execute(
            select(SymbolRow.qualified_name, func.count())
            .where(SymbolRow.project_id == project_id, SymbolRow.qualified_name.in_(batch))
            .group_by(SymbolRow.qualified_name)
        )
        unique.update(name for name, count in counted if count == 1)
    return unique


async def _first_per_group(
    session: AsyncSession, group: Any, condition: Any, limit: int
) -> list[RelationRow]:
    """Relations matching ``condition``, at most ``limit`` per value of ``group``, each group's
    in (file_id, ordinal) order (a window function: SQLite ≥ 3.25 and PostgreSQL)."""
    position = (
        func.row_number()
        .over(partition_by=group, order_by=(RelationRow.file_id, RelationRow.ordinal))
        .label("position")
    )
    numbered = select(RelationRow, position).where(condition).subquery()
    relation = aliased(RelationRow, numbered)
    rows = await session.scalars(
        select(relation)
        .where(numbered.c.position <= limit)
        .order_by(numbered.c.file_id, numbered.c.ordinal)
    )
    return list(rows)
