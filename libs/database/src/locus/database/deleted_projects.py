"""Tombstones of deleted projects, for the stores that hold a project's data (ast, retrieval,
impact): an event of a scan still queued when ``project.deleted`` was handled must not write the
project back. Project ids are random and never reused, so a tombstone is permanent."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from locus.database.engine import slices


class DeletedProjects:
    """The tombstones of one store: rows of ``model`` (a mapped class with ``project_id`` as
    its key and ``deleted_at``). A project found deleted is remembered in memory (a small set),
    so its late events cost one query; a project not found is asked again each time, since
    another replica may record its deletion in the shared store meanwhile."""

    def __init__(self, model: type[Any]) -> None:
        self._model = model
        self._known: set[str] = set()

    async def record(self, session: AsyncSession, project_id: str) -> None:
        """Add the project's tombstone in ``session``, the transaction that retracts its data
        (a repeated deletion keeps the first one's time); ``remember`` it after the commit."""
        if await session.get(self._model, project_id) is None:
            session.add(self._model(project_id=project_id, deleted_at=datetime.now(UTC)))

    def remember(self, project_id: str) -> None:
        self._known.add(project_id)

    async def among(self, session: AsyncSession, project_ids: Iterable[str]) -> set[str]:
        """The deleted projects among ``project_ids``, asked in ``session`` (a writer's own
        transaction, so its check and its writes go together)."""
        wanted = set(project_ids)
        column = self._model.project_id
        for batch in slices(sorted(wanted - self._known)):
            self._known.update(await session.scalars(select(column).where(column.in_(batch))))
        return wanted & self._known
