"""Async SQLAlchemy engines for Locus stores, configured by URL alone:
``sqlite+aiosqlite:///path`` (embedded default) or ``postgresql+asyncpg://…`` (production)."""

from locus.database.engine import Database, normalize_url, table_of

__all__ = ["Database", "normalize_url", "table_of"]
