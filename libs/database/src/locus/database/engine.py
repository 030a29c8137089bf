"""Engine and session factory with the settings each backend needs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import Table, event
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

T = TypeVar("T")
KEYS_PER_QUERY = 500  # bound-parameter lists stay well below SQLite's limit


def slices(items: Sequence[T], size: int = KEYS_PER_QUERY) -> Iterator[list[T]]:
    """``items`` in consecutive lists of at most ``size``: the values of one ``IN (...)`` list
    or the rows of one multi-row INSERT."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def normalize_url(url: str) -> str:
    """Accept plain ``postgresql://`` / ``sqlite:///`` URLs and pick the async drivers."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+asyncpg://" + url.split("://", 1)[1]
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url.split(":///", 1)[1]
    return url


# SQLite plans a query from the statistics ANALYZE leaves in sqlite_stat1. Without them an
# equality on a low-selectivity index (`project_id = ?`, one value for the whole table) looks
# as selective as a primary key, and `project_id = ? AND chunk_id IN (...)` scans every chunk
# of the project: 35 ms instead of 3 for 150 chunks of sympy. The statistics are refreshed at
# start-up and then each time the number of committed transactions doubles (from 64), each
# refresh bounded by `analysis_limit` (about 10 ms on a 250k-row store). PostgreSQL's
# autovacuum keeps its own statistics.
_ANALYSIS_LIMIT = 1000
_FIRST_ANALYZE_AFTER = 64


class Database:
    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        options: dict[str, Any] = {"echo": echo}
        if not self.is_sqlite:
            options.update(pool_size=10, max_overflow=10, pool_pre_ping=True)
        self.engine: AsyncEngine = create_async_engine(self.url, **options)
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._commits = 0
        self._next_analyze = _FIRST_ANALYZE_AFTER

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        async with self.sessions() as session, session.begin():
            yield session
        self._commits += 1
        if self._commits >= self._next_analyze:
            self._next_analyze *= 2
            await self.refresh_statistics()

    async def refresh_statistics(self) -> None:
        """Bring the query planner's statistics up to date (SQLite; a no-op elsewhere)."""
        if not self.is_sqlite:
            return
        async with self.engine.begin() as connection:
            await connection.exec_driver_sql(f"PRAGMA analysis_limit={_ANALYSIS_LIMIT}")
            await connection.exec_driver_sql("ANALYZE")

    async def dispose(self) -> None:
        await self.engine.dispose()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def table_of(model: type[Any]) -> Table:
    """The Core table of a mapped class: bulk inserts through it skip the ORM's per-row work
    (about twice as fast for thousands of rows)."""
    table = model.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not mapped to a table")
    return table
