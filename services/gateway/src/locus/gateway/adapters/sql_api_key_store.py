"""The ApiKeyStore on SQLAlchemy, in the gateway's own database and schema (the request log's;
whichever of the two stores starts first migrates it). Secrets are stored only as their
SHA-256."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from locus.database import Database
from locus.database.migrations import prepare_schema
from locus.gateway.adapters.migrations import SCHEMA
from locus.gateway.adapters.tables import ApiKeyRow
from locus.gateway.domain.access import Grant
from locus.gateway.domain.api_keys import ApiKey


class SqlApiKeyStore:
    def __init__(self, database: Database, *, migrate_on_start: bool = True) -> None:
        self._db = database
        self._migrate_on_start = migrate_on_start

    async def initialize(self) -> None:
        await prepare_schema(self._db, SCHEMA, migrate_on_start=self._migrate_on_start)

    async def close(self) -> None:
        await self._db.dispose()

    async def add_key(self, key: ApiKey, secret_hash: str) -> bool:
        row = ApiKeyRow(
            key_id=key.key_id,
            name=key.name,
            owner=key.owner,
            secret_hash=secret_hash,
            grants=json.dumps([str(g) for g in key.grants]),
            created_at=_utc(key.created_at),
            created_by=key.created_by,
            expires_at=_utc(key.expires_at) if key.expires_at else None,
            revoked_at=_utc(key.revoked_at) if key.revoked_at else None,
        )
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:
            return False
        return True

    async def key(self, key_id: str) -> tuple[ApiKey, str] | None:
        async with self._db.sessions() as session:
            row = await session.get(ApiKeyRow, key_id)
            return (_key(row), row.secret_hash) if row is not None else None

    async def keys(self, *, created_by: str = "", include_revoked: bool = False) -> list[ApiKey]:
        statement = select(ApiKeyRow).order_by(ApiKeyRow.created_at, ApiKeyRow.key_id)
        if created_by:
            statement = statement.where(ApiKeyRow.created_by == created_by)
        if not include_revoked:
            statement = statement.where(ApiKeyRow.revoked_at.is_(None))
        async with self._db.sessions() as session:
            return [_key(row) for row in await session.scalars(statement)]

    async def revoke_key(self, key_id: str, at: datetime) -> ApiKey | None:
        async with self._db.transaction() as session:
            row = await session.get(ApiKeyRow, key_id)
            if row is None:
                return None
            if row.revoked_at is None:
                row.revoked_at = _utc(at)
            return _key(row)


def _key(row: ApiKeyRow) -> ApiKey:
    return ApiKey(
        key_id=row.key_id,
        name=row.name,
        owner=row.owner,
        grants=tuple(Grant.parse(text) for text in json.loads(row.grants or "[]")),
        created_at=_utc(row.created_at),
        created_by=row.created_by,
        expires_at=_utc(row.expires_at) if row.expires_at else None,
        revoked_at=_utc(row.revoked_at) if row.revoked_at else None,
    )


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored moment is UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
