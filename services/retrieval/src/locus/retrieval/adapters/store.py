"""The retrieval store on SQLAlchemy (SQLite or PostgreSQL): embedding cache, file versions,
snapshots, tombstones of deleted projects. Small, keyed reads and idempotent upserts only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from locus.database import Database, DeletedProjects, slices
from locus.database.migrations import prepare_schema
from locus.retrieval.adapters.migrations import SCHEMA
from locus.retrieval.adapters.tables import (
    DeletedProjectRow,
    EmbeddingRow,
    FileStateRow,
    SnapshotRow,
    VectorPartRow,
)
from locus.retrieval.domain.file_versions import FileState


class RetrievalStore:
    def __init__(self, database: Database, *, migrate_on_start: bool = True) -> None:
        self._db = database
        self._migrate_on_start = migrate_on_start
        self._deleted = DeletedProjects(DeletedProjectRow)

    async def initialize(self) -> None:
        await prepare_schema(self._db, SCHEMA, migrate_on_start=self._migrate_on_start)

    async def close(self) -> None:
        await self._db.dispose()

    def _insert(self, table: Any) -> Any:
        dialect = postgresql if not self._db.is_sqlite else sqlite
        return dialect.insert(table)

    # embedding cache

    async def cached_vectors(
        self, model_id: str, content_hashes: Sequence[str]
    ) -> dict[str, NDArray[np.float32]]:
        found: dict[str, NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(content_hashes))
        async with self._db.sessions() as session:
            for keys in slices(unique):
                rows = await session.execute(
                    select(EmbeddingRow.content_sha256, EmbeddingRow.vector).where(
                        EmbeddingRow.model_id == model_id,
                        EmbeddingRow.content_sha256.in_(keys),
                    )
                )
                for sha, blob in rows:
                    found[sha] = np.frombuffer(blob, dtype="<f4").copy()
        return found

    async def save_vectors(self, model_id: str, vectors: Mapping[str, NDArray[np.float32]]) -> None:
        rows = [
            {
                "model_id": model_id,
                "content_sha256": sha,
                "vector": np.asarray(vector, dtype="<f4").tobytes(),
            }
            for sha, vector in vectors.items()
        ]
        if not rows:
            return
        async with self._db.transaction() as session:
            for part in slices(rows, 200):
                statement = self._insert(EmbeddingRow).values(list(part))
                await session.execute(statement.on_conflict_do_nothing())

    # file versions

    async def file_states(self, file_ids: Sequence[str]) -> dict[str, FileState]:
        states: dict[str, FileState] = {}
        async with self._db.sessions() as session:
            for keys in slices(list(dict.fromkeys(file_ids))):
                rows = await session.scalars(
                    select(FileStateRow).where(FileStateRow.file_id.in_(keys))
                )
                for row in rows:
                    states[row.file_id] = FileState(
                        file_id=row.file_id,
                        project_id=row.project_id,
                        snapshot_seq=row.snapshot_seq,
                        sha256=row.sha256,
                        deleted=row.deleted,
                        part_count=row.part_count,
                        parts_done=frozenset(int(p) for p in row.parts_done.split(",") if p),
                        chunk_count=row.chunk_count,
                    )
        return states

    async def save(
        self, states: Sequence[FileState], snapshots: Mapping[str, tuple[str, int]]
    ) -> None:
        """Upsert file states and snapshots (snapshot_id → (project_id, seq)) in one go."""
        async with self._db.transaction() as session:
            await self._upsert_states(session, states)
            for snapshot_id, (project_id, seq) in snapshots.items():
                statement = self._insert(SnapshotRow).values(
                    snapshot_id=snapshot_id, project_id=project_id, snapshot_seq=seq
                )
                await session.execute(statement.on_conflict_do_nothing())

    async def _upsert_states(self, session: AsyncSession, states: Sequence[FileState]) -> None:
        for state in states:
            values = {
                "file_id": state.file_id,
                "project_id": state.project_id,
                "snapshot_seq": state.snapshot_seq,
                "sha256": state.sha256,
                "deleted": state.deleted,
                "part_count": state.part_count,
                "parts_done": ",".join(str(p) for p in sorted(state.parts_done)),
                "chunk_count": state.chunk_count,
            }
            statement = self._insert(FileStateRow).values(**values)
            await session.execute(
                statement.on_conflict_do_update(
                    index_elements=[FileStateRow.file_id],
                    set_={k: v for k, v in values.items() if k != "file_id"},
                )
            )

    # vectors lane progress

    async def record_vector_parts(
        self, parts: Sequence[tuple[str, str, int, int]], part_counts: Mapping[str, int]
    ) -> set[str]:
        """Record (file_id, sha256, snapshot_seq, part_index) as embedded; returns the files
        of which every part (``part_counts``) of that version is embedded now."""
        if not parts:
            return set()
        rows = {
            (file_id, part_index): {
                "file_id": file_id,
                "part_index": part_index,
                "sha256": sha256,
                "snapshot_seq": seq,
            }
            for file_id, sha256, seq, part_index in parts
        }
        versions = {file_id: (sha256, seq) for file_id, sha256, seq, _ in parts}
        complete: set[str] = set()
        async with self._db.transaction() as session:
            for values in rows.values():
                statement = self._insert(VectorPartRow).values(**values)
                await session.execute(
                    statement.on_conflict_do_update(
                        index_elements=[VectorPartRow.file_id, VectorPartRow.part_index],
                        set_={"sha256": values["sha256"], "snapshot_seq": values["snapshot_seq"]},
                    )
                )
        # Counted after the commit: two replicas recording parts of one file at the same time
        # then both see both (a file reported twice is harmless; never reported is not).
        async with self._db.sessions() as session:
            for keys in slices(list(versions)):
                counted = await session.execute(
                    select(
                        VectorPartRow.file_id,
                        VectorPartRow.sha256,
                        VectorPartRow.snapshot_seq,
                        func.count(),
                    )
                    .where(VectorPartRow.file_id.in_(keys))
                    .group_by(
                        VectorPartRow.file_id, VectorPartRow.sha256, VectorPartRow.snapshot_seq
                    )
                )
                for file_id, sha256, seq, count in counted:
                    if (sha256, seq) == versions[file_id] and count >= part_counts[file_id]:
                        complete.add(file_id)
        return complete

    async def delete_project(self, project_id: str) -> int:
        """Delete the project's file versions, vectors-lane progress and snapshots and record
        its tombstone, in one transaction; the number of files it had (0 when it is gone
        already). The embedding cache is keyed by content hash, not by project, and stays."""
        async with self._db.transaction() as session:
            file_ids = list(
                await session.scalars(
                    select(FileStateRow.file_id).where(FileStateRow.project_id == project_id)
                )
            )
            for keys in slices(file_ids):
                await session.execute(delete(VectorPartRow).where(VectorPartRow.file_id.in_(keys)))
            await session.execute(delete(FileStateRow).where(FileStateRow.project_id == project_id))
            await session.execute(delete(SnapshotRow).where(SnapshotRow.project_id == project_id))
            await self._deleted.record(session, project_id)
        self._deleted.remember(project_id)
        return len(file_ids)

    async def deleted_projects(self, project_ids: Iterable[str]) -> set[str]:
        """The projects among ``project_ids`` that were deleted (tombstoned)."""
        async with self._db.sessions() as session:
            return await self._deleted.among(session, project_ids)

    async def snapshot_seq(self, project_id: str, snapshot_id: str) -> int | None:
        async with self._db.sessions() as session:
            row = await session.get(SnapshotRow, snapshot_id)
        if row is None or row.project_id != project_id:
            return None
        return row.snapshot_seq

    async def project_has_chunks(self, project_id: str) -> bool:
        async with self._db.sessions() as session:
            found = await session.scalar(
                select(FileStateRow.file_id)
                .where(FileStateRow.project_id == project_id, FileStateRow.chunk_count > 0)
                .limit(1)
            )
        return found is not None
