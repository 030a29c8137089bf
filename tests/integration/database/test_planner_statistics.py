"""SQLite stores keep the query planner's statistics current: a look-up by primary key within
a project uses the key, not the project's index (which would scan every row of the project)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Index, String, insert
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from locus.database import Database
from locus.database.engine import table_of


class _Base(DeclarativeBase):
    pass


class _Item(_Base):
    __tablename__ = "items"
    __table_args__ = (Index("ix_items_project", "project_id"),)
    item_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))


LOOKUP = "SELECT item_id FROM items WHERE project_id = ? AND item_id IN (?, ?, ?)"


async def _start(database: Database) -> None:
    """What a store's start does for its statistics: its schema in place (here by create_all,
    for a table of the test's own), then ``refresh_statistics`` (``prepare_schema`` calls it)."""
    async with database.engine.begin() as connection:
        await connection.run_sync(_Base.metadata.create_all)
    await database.refresh_statistics()


async def _plan(database: Database) -> str:
    async with database.engine.connect() as connection:
        rows = await connection.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + LOOKUP, ("p", "i1", "i2", "i3")
        )
        return " | ".join(str(row[-1]) for row in rows)


async def _fill(database: Database, transactions: int, per_transaction: int) -> None:
    for batch in range(transactions):
        async with database.transaction() as session:
            await session.execute(
                insert(table_of(_Item)),
                [{"item_id": f"i{batch}-{n}", "project_id": "p"} for n in range(per_transaction)],
            )


async def test_a_store_that_grew_looks_up_by_key(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'store.db'}")
    await _start(database)
    await _fill(database, transactions=80, per_transaction=50)  # past the first refresh
    plan = await _plan(database)
    await database.dispose()
    assert "ix_items_project" not in plan, plan
    assert "sqlite_autoindex_items_1" in plan, plan


async def test_a_store_written_before_statistics_existed_is_analysed_at_start(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    first = Database(f"sqlite:///{path}")
    await _start(first)
    await _fill(first, transactions=10, per_transaction=400)  # too few commits to refresh
    async with first.engine.begin() as connection:
        await connection.exec_driver_sql("DROP TABLE IF EXISTS sqlite_stat1")
    assert "ix_items_project" in await _plan(first)  # what an older store planned
    await first.dispose()

    restarted = Database(f"sqlite:///{path}")
    await _start(restarted)
    plan = await _plan(restarted)
    await restarted.dispose()
    assert "sqlite_autoindex_items_1" in plan, plan
