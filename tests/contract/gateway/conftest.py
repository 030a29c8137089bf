"""MetadataStore adapters under contract: the SQLAlchemy store on SQLite (always) and on a real
PostgreSQL (``postgres_server`` / ``postgres_database_url`` of tests/conftest.py: a database of
its own per test). Without PostgreSQL, the PostgreSQL cases skip and say why."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from locus.database import Database
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh database of each backend."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}"
    url: str = request.getfixturevalue("postgres_database_url")
    return url


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[SqlMetadataStore]:
    """A fresh, initialized store of each backend."""
    database = Database(store_url)
    if not database.is_sqlite:
        await _drop_gateway_tables(database)
    metadata_store = SqlMetadataStore(database)
    await metadata_store.initialize()
    try:
        yield metadata_store
    finally:
        if not database.is_sqlite:
            await _drop_gateway_tables(database)
        await metadata_store.close()


async def _drop_gateway_tables(database: Database) -> None:
    from sqlalchemy import text

    from locus.gateway.adapters.tables import Base

    async with database.engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.execute(text("DROP TABLE IF EXISTS alembic_version_gateway"))
