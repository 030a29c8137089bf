"""A scan job's progress as the store counts it from the stages' reports: parsed, searchable,
failed, embedded and embedding-failed files, on a real SQLite database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import insert

from locus.database import Database
from locus.ingestion.adapters.store import IngestionStore
from locus.ingestion.adapters.tables import JobFileRow

pytestmark = pytest.mark.integration

REQUIRED = ["ast", "retrieval", "impact"]
EMBEDDING = ["vectors"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[IngestionStore]:
    store = IngestionStore(Database(f"sqlite+aiosqlite:///{tmp_path / 'ingestion.db'}"))
    await store.initialize()
    yield store
    await store.close()


async def add_job_files(store: IngestionStore, job_id: str, count: int) -> list[str]:
    file_ids = [f"f_{index:02d}" for index in range(count)]
    async with store._db.transaction() as session:
        await session.execute(
            insert(JobFileRow),
            [
                {
                    "job_id": job_id,
                    "file_id": file_id,
                    "source_id": "src_1",
                    "relative_path": f"pkg/{file_id}.py",
                    "change_type": "added",
                }
                for file_id in file_ids
            ],
        )
    return file_ids


async def test_files_are_counted_at_each_level(store: IngestionStore) -> None:
    files = await add_job_files(store, "job_1", 7)
    for stage in REQUIRED:
        await store.record_stage("job_1", stage, [(f, "INDEXED", "") for f in files[:5]])
    await store.record_stage("job_1", "ast", [(files[5], "INDEXED", "")])  # parsed only
    await store.record_stage("job_1", "ast", [(files[6], "FAILED", "syntax")])
    await store.record_stage("job_1", "vectors", [(f, "INDEXED", "") for f in files[:3]])
    await store.record_stage("job_1", "vectors", [(files[3], "FAILED", "endpoint down")])

    progress = await store.progress("job_1", REQUIRED, EMBEDDING)
    assert (progress.total, progress.parsed, progress.indexed, progress.failed) == (7, 7, 5, 1)
    assert (progress.embedded, progress.embedding_failed) == (3, 1)
    assert not progress.done  # files[5] is parsed but not searchable yet
    assert not progress.embedded_done

    for stage in ("retrieval", "impact"):
        await store.record_stage("job_1", stage, [(files[5], "INDEXED", "")])
    await store.record_stage("job_1", "vectors", [(f, "INDEXED", "") for f in files[4:6]])
    progress = await store.progress("job_1", REQUIRED, EMBEDDING)
    assert progress.done
    assert (progress.indexed, progress.embedded, progress.embedding_failed) == (6, 5, 1)
    assert progress.embedded_done  # 5 embedded + 1 embedding failed + 1 failed = 7


async def test_without_embedding_stages_searchable_is_the_last_level(
    store: IngestionStore,
) -> None:
    files = await add_job_files(store, "job_2", 2)
    await store.record_stage("job_2", "ast", [(f, "INDEXED", "") for f in files])
    progress = await store.progress("job_2", ["ast"])
    # Nothing waits for vectors: every searchable file is as embedded as it gets.
    assert (progress.indexed, progress.embedded, progress.embedding_stages) == (2, 2, 0)
    assert progress.done
    assert progress.embedded_done
