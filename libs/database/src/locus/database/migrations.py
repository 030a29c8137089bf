"""Schema migrations of the Locus stores: Alembic driven from code (no alembic.ini, no env.py).

Each store ships its revisions in its own package (``StoreSchema.scripts``/versions) and keeps
its revision in its own version table (``alembic_version_<store>``), so several stores can share
one PostgreSQL database. A database created before migrations existed (``create_all``: the
store's tables, no version table) is adopted: stamped at the first revision, then upgraded.
A revision that alters a table does it in ``op.batch_alter_table`` (SQLite cannot ALTER most
things, so batch mode copies the table there; PostgreSQL gets plain ALTERs).
"""

from __future__ import annotations

import asyncio
import json
import sys
import zlib
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from locus.config import StartupRefused
from locus.database.engine import Database

FIRST_REVISION = "0001"
# What ``stored_revision`` reports for a database without a version table.
EMPTY = "empty"
PRE_MIGRATIONS = "pre-migrations"


@dataclass(frozen=True)
class StoreSchema:
    """Where a store's revisions are and which tables its first revision creates (a database
    holding them without a version table was created by ``create_all`` and is adopted)."""

    store: str  # "ast": its revision is kept in alembic_version_ast
    scripts: Path  # the directory that holds versions/
    first_revision_tables: frozenset[str]

    @property
    def version_table(self) -> str:
        return f"alembic_version_{self.store}"

    @property
    def head(self) -> str:
        head = _script_directory(self.scripts).get_current_head()
        if head is None:
            raise SchemaError(f"{self.store} store: no revision in {self.scripts / 'versions'}")
        return head


@dataclass(frozen=True)
class Migration:
    """One store's revision before and after ``migrate``."""

    store: str
    before: str
    after: str


class SchemaError(StartupRefused):
    """The stored schema cannot be used or migrated; the message says what to do."""


class SchemaBehind(SchemaError):
    """The stored schema is older than the code and migrating on start is off."""


async def stored_revision(database: Database, schema: StoreSchema) -> str:
    """The revision in the store's version table, else ``PRE_MIGRATIONS`` (its tables without a
    version table) or ``EMPTY``."""
    async with database.engine.connect() as connection:
        return await connection.run_sync(_stored_revision, schema)


async def migrate(database: Database, schema: StoreSchema, *, to: str = "head") -> Migration:
    """Upgrade the store to revision ``to`` in one transaction (PostgreSQL: under an advisory
    lock, so replicas starting together migrate once), adopting a pre-migrations database."""
    async with database.engine.begin() as connection:
        migration = await connection.run_sync(_upgrade, schema, to)
    await database.refresh_statistics()
    return migration


async def prepare_schema(
    database: Database, schema: StoreSchema, *, migrate_on_start: bool
) -> None:
    """At a store's start: migrate it to head, or (``migrate_on_start`` off) refuse to start
    unless it is already there."""
    if migrate_on_start:
        await migrate(database, schema)
        return
    current = await stored_revision(database, schema)
    head = schema.head
    if current != head:
        _known(schema, current)
        raise SchemaBehind(
            f"{schema.store} store: schema at {current}, code needs {head}: run `locus migrate` "
            f"(or set migrate_on_start, LOCUS_MIGRATE_ON_START=true)"
        )
    await database.refresh_statistics()


def run_migrate_command(schema: StoreSchema, url: str) -> None:
    """What ``python -m locus.<service>.migrate`` does (``locus migrate`` runs one per installed
    service): migrate the store at ``url`` and print one JSON line (store, before, after), or
    the store and the error, exiting 1."""

    async def run() -> Migration:
        database = Database(url)
        try:
            return await migrate(database, schema)
        finally:
            await database.dispose()

    try:
        migration = asyncio.run(run())
    except SchemaError as error:
        print(json.dumps({"store": schema.store, "error": str(error)}))
        sys.exit(1)
    print(json.dumps(asdict(migration)))


@cache
def _script_directory(scripts: Path) -> ScriptDirectory:
    return ScriptDirectory(str(scripts))


def _stored_revision(connection: Connection, schema: StoreSchema) -> str:
    context = MigrationContext.configure(connection, opts={"version_table": schema.version_table})
    current = context.get_current_revision()
    if current is not None:
        return current
    existing = set(inspect(connection).get_table_names())
    if existing & schema.first_revision_tables:
        missing = schema.first_revision_tables - existing
        if missing:
            raise SchemaError(
                f"{schema.store} store: found some of its tables but not "
                f"{', '.join(sorted(missing))}, and no {schema.version_table}: this database was "
                "not created by Locus; point the store at an empty database"
            )
        return PRE_MIGRATIONS
    return EMPTY


def _known(schema: StoreSchema, revision: str) -> None:
    if revision in (EMPTY, PRE_MIGRATIONS):
        return
    try:
        _script_directory(schema.scripts).get_revision(revision)
    except CommandError:
        raise SchemaError(
            f"{schema.store} store: schema at {revision}, which this code does not know (a "
            f"newer version migrated it; its head is {schema.head}): run that version"
        ) from None


def _upgrade(connection: Connection, schema: StoreSchema, destination: str) -> Migration:
    if connection.dialect.name == "postgresql":
        lock = zlib.crc32(schema.version_table.encode())
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({lock})")
    before = _stored_revision(connection, schema)
    _known(schema, before)
    script = _script_directory(schema.scripts)
    options: dict[str, Any] = {"version_table": schema.version_table}
    if before == PRE_MIGRATIONS:
        MigrationContext.configure(connection, opts=options).stamp(script, FIRST_REVISION)

    def steps(current: Any, _context: MigrationContext) -> Any:
        return script._upgrade_revs(destination, current)  # what `alembic upgrade` runs

    with EnvironmentContext(Config(), script, fn=steps, destination_rev=destination) as context:
        context.configure(connection=connection, **options)
        # The caller's transaction holds the whole upgrade (one transaction on PostgreSQL).
        context.run_migrations()
    after = MigrationContext.configure(connection, opts=options).get_current_revision()
    return Migration(schema.store, before, after or EMPTY)
