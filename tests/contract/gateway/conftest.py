"""MetadataStore adapters under contract: the SQLAlchemy store on SQLite (always) and on a real
PostgreSQL (``postgres_server`` / ``postgres_database_url`` of tests/conftest.py: a database of
its own per test). Without PostgreSQL, the PostgreSQL cases skip and say why."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from stores import drop_everything

from locus.database import Database
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore


@pytest.fixture
async def store(store_database_url: str) -> AsyncIterator[SqlMetadataStore]:
    """A fresh, initialized store of each backend."""
    database = Database(store_database_url)
    if not database.is_sqlite:
        await drop_everything(database)
    metadata_store = SqlMetadataStore(database)
    await metadata_store.initialize()
    try:
        yield metadata_store
    finally:
        if not database.is_sqlite:
            await drop_everything(database)
        await metadata_store.close()
