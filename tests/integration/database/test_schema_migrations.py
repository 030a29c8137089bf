"""Schema migrations of every store, on SQLite and on PostgreSQL: an empty database upgraded to
head has exactly the tables of tables.py (Alembic's autogenerate finds no difference); a
database made by the previous release's ``create_all`` is adopted; a database at an earlier
revision is upgraded with every row kept; with migrate-on-start off a store behind the code
refuses to start and says why; ``locus migrate`` upgrades the stores of a data directory."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, MetaData, insert, inspect, select, text
from sqlalchemy.orm import DeclarativeBase
from stores import drop_everything

from locus.ast.adapters.migrations import SCHEMA as AST_SCHEMA
from locus.ast.adapters.store import AstStore
from locus.ast.adapters.tables import Base as AstBase
from locus.database import Database
from locus.database.migrations import (
    EMPTY,
    FIRST_REVISION,
    PRE_MIGRATIONS,
    SchemaBehind,
    SchemaError,
    StoreSchema,
    migrate,
    prepare_schema,
    stored_revision,
)
from locus.gateway.adapters.migrations import SCHEMA as GATEWAY_SCHEMA
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore
from locus.gateway.adapters.tables import Base as GatewayBase
from locus.impact.adapters.migrations import SCHEMA as IMPACT_SCHEMA
from locus.impact.adapters.store import ImpactStore
from locus.impact.adapters.tables import Base as ImpactBase
from locus.ingestion.adapters.migrations import SCHEMA as INGESTION_SCHEMA
from locus.ingestion.adapters.store import IngestionStore
from locus.ingestion.adapters.tables import Base as IngestionBase
from locus.retrieval.adapters.migrations import SCHEMA as RETRIEVAL_SCHEMA
from locus.retrieval.adapters.store import RetrievalStore
from locus.retrieval.adapters.tables import Base as RetrievalBase

pytestmark = pytest.mark.integration

LOCUS = Path(sys.executable).parent / "locus"


@dataclass(frozen=True)
class StoreUnderTest:
    schema: StoreSchema
    base: type[DeclarativeBase]
    open_store: Callable[..., Any]  # (Database, *, migrate_on_start) -> the store


STORES = {
    "ast": StoreUnderTest(AST_SCHEMA, AstBase, AstStore),
    "gateway": StoreUnderTest(GATEWAY_SCHEMA, GatewayBase, SqlMetadataStore),
    "impact": StoreUnderTest(IMPACT_SCHEMA, ImpactBase, ImpactStore),
    "ingestion": StoreUnderTest(INGESTION_SCHEMA, IngestionBase, IngestionStore),
    "retrieval": StoreUnderTest(RETRIEVAL_SCHEMA, RetrievalBase, RetrievalStore),
}


def _revisions(schema: StoreSchema) -> list[str]:
    """Every revision of the store, oldest first."""
    script = ScriptDirectory(str(schema.scripts))
    return [revision.revision for revision in reversed(list(script.walk_revisions()))]


EARLIER_REVISIONS = [
    (name, revision) for name, store in STORES.items() for revision in _revisions(store.schema)[:-1]
]


@pytest.fixture
async def database(store_database_url: str) -> AsyncIterator[Database]:
    database = Database(store_database_url)
    await drop_everything(database)  # a server that refused CREATE DATABASE shares its own
    try:
        yield database
    finally:
        await drop_everything(database)
        await database.dispose()


# rows of whatever tables a database holds, made from their reflected columns


def _value(column: Any, row: int) -> Any:
    kind = column.type.python_type
    if kind is bool:
        return row % 2 == 0
    if kind is int:
        return row
    if kind is float:
        return row + 0.5
    if kind is bytes:
        return f"bytes-{row}".encode()
    if kind is datetime:
        return datetime(2026, 1, row + 1, 12, 0, tzinfo=UTC)
    return f"v{row}"  # every text column: the same value in a foreign key and its target


async def _fill(database: Database, rows_per_table: int = 3) -> None:
    def fill(connection: Connection) -> None:
        metadata = MetaData()
        metadata.reflect(connection)
        for table in metadata.sorted_tables:
            if table.name.startswith("alembic_version"):
                continue
            connection.execute(
                insert(table),
                [{c.name: _value(c, row) for c in table.columns} for row in range(rows_per_table)],
            )

    async with database.engine.begin() as connection:
        await connection.run_sync(fill)


async def _contents(database: Database) -> dict[str, list[dict[str, Any]]]:
    """Every row of every store table (column → value), in key order (the version table left
    out)."""

    def read(connection: Connection) -> dict[str, list[dict[str, Any]]]:
        metadata = MetaData()
        metadata.reflect(connection)
        return {
            table.name: [
                dict(row._mapping)
                for row in connection.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in metadata.sorted_tables
            if not table.name.startswith("alembic_version")
        }

    async with database.engine.connect() as connection:
        return await connection.run_sync(read)


# Ingestion's revision 0004 turns the projects' free-text labels into registry entities: the
# label columns go and the new tables are filled from them (test_ingestion_labels_become_...).
MOVED_COLUMNS = {"projects": {"system", "subsystem"}}
FILLED_FROM_EARLIER_ROWS = {"systems", "subsystems"}


def _assert_kept(
    before: dict[str, list[dict[str, Any]]], after: dict[str, list[dict[str, Any]]]
) -> None:
    """Every row is kept with its values; a later revision may only add (empty tables, columns
    with their defaults), apart from the data a revision moves on purpose (MOVED_COLUMNS)."""

    def kept(table: str, row: dict[str, Any]) -> dict[str, Any]:
        moved = MOVED_COLUMNS.get(table, set()) if after.get(table) else set()
        return {column: value for column, value in row.items() if column not in moved}

    assert {
        table: [{column: row[column] for column in kept(table, rows[0])} for row in after[table]]
        for table, rows in before.items()
        if rows
    } == {table: [kept(table, row) for row in rows] for table, rows in before.items() if rows}
    assert all(
        not after[table]
        for table in set(after) - set(before)
        if table not in FILLED_FROM_EARLIER_ROWS or not before.get("projects")
    )


async def _differences(database: Database, store: StoreUnderTest) -> list[Any]:
    """What Alembic's autogenerate would change to make the database match tables.py."""

    def compare(connection: Connection) -> list[Any]:
        context = MigrationContext.configure(
            connection, opts={"version_table": store.schema.version_table}
        )
        return list(compare_metadata(context, store.base.metadata))

    async with database.engine.connect() as connection:
        return await connection.run_sync(compare)


async def _as_previous_release_made_it(database: Database, schema: StoreSchema) -> None:
    """The first revision's tables without a version table: what ``create_all`` made before
    migrations existed (the first revision is that schema, see the head and impact tests)."""
    await migrate(database, schema, to=FIRST_REVISION)
    async with database.engine.begin() as connection:
        await connection.execute(text(f"DROP TABLE {schema.version_table}"))


@pytest.mark.parametrize("name", STORES)
async def test_an_empty_database_is_upgraded_to_exactly_the_tables_of_the_code(
    database: Database, name: str
) -> None:
    store = STORES[name]
    assert await stored_revision(database, store.schema) == EMPTY

    migration = await migrate(database, store.schema)

    assert (migration.before, migration.after) == (EMPTY, store.schema.head)
    assert await _differences(database, store) == []
    async with database.engine.connect() as connection:
        tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
    assert tables == {*store.base.metadata.tables, f"alembic_version_{name}"}
    again = await migrate(database, store.schema)
    assert (again.before, again.after) == (store.schema.head, store.schema.head)


async def test_impact_first_revision_is_the_previous_schema_less_one_redundant_index(
    database: Database,
) -> None:
    """Revision 0002 dropped only ix_impact_symbols_project: 0001 is the schema before it (and
    before 0003's impact_deleted_projects)."""
    await migrate(database, IMPACT_SCHEMA, to=FIRST_REVISION)

    differences = await _differences(database, STORES["impact"])

    assert sorted((kind, item.name) for kind, item in differences) == [
        ("add_table", "impact_deleted_projects"),
        ("remove_index", "ix_impact_symbols_project"),
    ]


@pytest.mark.parametrize("name", STORES)
async def test_a_database_created_before_migrations_is_adopted_with_its_rows(
    database: Database, name: str
) -> None:
    store = STORES[name]
    await _as_previous_release_made_it(database, store.schema)
    await _fill(database)
    rows = await _contents(database)
    assert await stored_revision(database, store.schema) == PRE_MIGRATIONS

    opened = store.open_store(database)
    await opened.initialize()

    assert await stored_revision(database, store.schema) == store.schema.head
    _assert_kept(rows, await _contents(database))
    assert all(rows.values())
    assert await _differences(database, store) == []


@pytest.mark.parametrize(("name", "revision"), EARLIER_REVISIONS)
async def test_a_database_at_an_earlier_revision_is_upgraded_with_every_row(
    database: Database, name: str, revision: str
) -> None:
    store = STORES[name]
    await migrate(database, store.schema, to=revision)
    await _fill(database)
    rows = await _contents(database)

    migration = await migrate(database, store.schema)

    assert (migration.before, migration.after) == (revision, store.schema.head)
    _assert_kept(rows, await _contents(database))
    assert await _differences(database, store) == []


async def test_ingestion_labels_become_systems_and_subsystems_with_their_projects(
    database: Database,
) -> None:
    """Revision 0004: each distinct (system, subsystem) label pair becomes a system and a
    subsystem (a missing half named "default"); every project points at its pair's subsystem."""
    await migrate(database, INGESTION_SCHEMA, to="0003")
    created = datetime(2026, 1, 1, tzinfo=UTC)
    labels = {"p1": ("shop", "orders"), "p2": ("shop", "orders"), "p3": ("shop", "")}
    labels |= {"p4": ("", "tools"), "p5": ("", "")}
    async with database.engine.begin() as connection:
        for project_id, (system, subsystem) in labels.items():
            await connection.execute(
                text(
                    "INSERT INTO projects (project_id, name, system, subsystem, created_at, "
                    "latest_snapshot_id, last_snapshot_seq) "
                    "VALUES (:id, :name, :system, :subsystem, :created, '', 0)"
                ),
                {
                    "id": project_id,
                    "name": f"n-{project_id}",
                    "system": system,
                    "subsystem": subsystem,
                    "created": created,
                },
            )

    await migrate(database, INGESTION_SCHEMA)

    async with database.engine.connect() as connection:
        placed = dict(
            (
                await connection.execute(
                    text(
                        "SELECT p.project_id, s.name || '/' || sub.name FROM projects p "
                        "JOIN subsystems sub ON sub.subsystem_id = p.subsystem_id "
                        "JOIN systems s ON s.system_id = sub.system_id"
                    )
                )
            ).all()
        )
        systems = (await connection.execute(text("SELECT count(*) FROM systems"))).scalar()
    assert placed == {
        "p1": "shop/orders",
        "p2": "shop/orders",
        "p3": "shop/default",
        "p4": "default/tools",
    }
    assert systems == 2
    assert await _differences(database, STORES["ingestion"]) == []


@pytest.mark.parametrize("name", STORES)
async def test_with_migrate_on_start_off_a_store_behind_the_code_refuses_to_start(
    database: Database, name: str
) -> None:
    store = STORES[name]
    revisions = _revisions(store.schema)
    if len(revisions) > 1:
        await migrate(database, store.schema, to=revisions[-2])
        behind = revisions[-2]
    else:
        await _as_previous_release_made_it(database, store.schema)
        behind = PRE_MIGRATIONS

    with pytest.raises(SchemaBehind) as refused:
        await store.open_store(database, migrate_on_start=False).initialize()

    assert str(refused.value).startswith(
        f"{name} store: schema at {behind}, code needs {store.schema.head}: run `locus migrate`"
    )
    assert await stored_revision(database, store.schema) == behind  # left as it was
    await migrate(database, store.schema)
    await store.open_store(database, migrate_on_start=False).initialize()  # at head: starts


async def test_with_migrate_on_start_off_an_empty_database_is_refused_too(
    database: Database,
) -> None:
    with pytest.raises(SchemaBehind, match=f"schema at empty, code needs {AST_SCHEMA.head}"):
        await prepare_schema(database, AST_SCHEMA, migrate_on_start=False)


async def test_a_revision_the_code_does_not_know_is_refused_either_way(database: Database) -> None:
    """A database a newer release migrated: never run older code's migrations on it."""
    await migrate(database, AST_SCHEMA)
    async with database.engine.begin() as connection:
        await connection.execute(text("UPDATE alembic_version_ast SET version_num = '9999'"))

    for migrate_on_start in (True, False):
        with pytest.raises(SchemaError, match="schema at 9999, which this code does not know"):
            await prepare_schema(database, AST_SCHEMA, migrate_on_start=migrate_on_start)


async def test_some_tables_without_a_version_table_are_refused(database: Database) -> None:
    await _as_previous_release_made_it(database, AST_SCHEMA)
    async with database.engine.begin() as connection:
        await connection.execute(text("DROP TABLE ast_chunks"))

    with pytest.raises(SchemaError, match="not ast_chunks"):
        await migrate(database, AST_SCHEMA)


async def test_stores_sharing_one_database_keep_their_own_revisions(database: Database) -> None:
    for store in STORES.values():
        await migrate(database, store.schema)

    for name, store in STORES.items():
        assert await stored_revision(database, store.schema) == store.schema.head
        others = {
            table
            for other, shared in STORES.items()
            if other != name
            for table in [*shared.base.metadata.tables, shared.schema.version_table]
        }
        # Autogenerate sees the other stores' tables as extra (and their indexes): nothing else.
        differences = await _differences(database, store)
        assert {item.name for kind, item in differences if kind == "remove_table"} == others
        assert {item.table.name for kind, item in differences if kind == "remove_index"} <= others
        assert {kind for kind, _ in differences} == {"remove_table", "remove_index"}


def test_locus_migrate_upgrades_the_stores_of_a_data_directory(tmp_path: Path) -> None:
    """Ingestion as the previous release left it, the other stores new: each reported before
    and after; a second run finds every store at head."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not (key.startswith("LOCUS_") and key.endswith(("_DATA_DIR", "_DATABASE_URL")))
    }
    ingestion_dir = tmp_path / "ingestion"
    ingestion_dir.mkdir()

    async def previous_release() -> None:
        database = Database(f"sqlite+aiosqlite:///{ingestion_dir / 'ingestion.db'}")
        await _as_previous_release_made_it(database, INGESTION_SCHEMA)
        await database.dispose()

    asyncio.run(previous_release())

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LOCUS), "migrate", "--data-dir", str(tmp_path), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=environment,
            check=False,
        )

    first = run()
    assert first.returncode == 0, first.stderr
    reported = {item["store"]: item for item in json.loads(first.stdout)}
    assert set(reported) == set(STORES)
    assert (reported["ingestion"]["before"], reported["ingestion"]["after"]) == (
        PRE_MIGRATIONS,
        INGESTION_SCHEMA.head,
    )
    for name, store in STORES.items():
        assert reported[name]["after"] == store.schema.head
        assert (tmp_path / name / f"{name}.db").exists()

    second = run()
    assert second.returncode == 0, second.stderr
    for item in json.loads(second.stdout):
        assert item["before"] == item["after"] == STORES[item["store"]].schema.head
