"""Async SQLAlchemy engines for Locus stores, configured by URL alone:
``sqlite+aiosqlite:///path`` (embedded default) or ``postgresql+asyncpg://…`` (production)."""

from locus.database.deleted_projects import DeletedProjects
from locus.database.engine import KEYS_PER_QUERY, Database, normalize_url, slices, table_of

__all__ = ["KEYS_PER_QUERY", "Database", "DeletedProjects", "normalize_url", "slices", "table_of"]
