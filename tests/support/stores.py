"""What every store's tests share: a fresh database of each backend the stores run on (an
SQLite file; a new database on the tests' real PostgreSQL server) and emptying a database that
cannot be new (a ``LOCUS_TEST_PG_URL`` server that refused CREATE DATABASE shares its own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import MetaData
from sqlalchemy.engine import Connection

from locus.database.engine import Database

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def database_url_for(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """For a fixture parametrized with BACKENDS: the URL of a fresh database of its backend."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("postgres_database_url")
    return url


async def drop_everything(database: Database) -> None:
    """Drop every table the database holds, version tables included (PostgreSQL only: an
    SQLite file of a test is always new)."""
    if database.is_sqlite:
        return

    def drop(connection: Connection) -> None:
        metadata = MetaData()
        metadata.reflect(connection)
        metadata.drop_all(connection)

    async with database.engine.begin() as connection:
        await connection.run_sync(drop)
