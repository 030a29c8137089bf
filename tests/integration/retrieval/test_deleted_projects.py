"""Late events of a deleted project (a finished scan's files.parsed and vectors.requested still
queued when project.deleted was handled) are acknowledged, logged and dropped: no BM25 index
directory, chunk, vector or file version of the project comes back, nothing is reported or
dead-lettered; another project's events are indexed and embedded as before; the tombstone
outlives a restart. Real nats-server, tantivy, qdrant-edge and the MiniLM model."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from locus.retrieval.adapters.edge_vectors import EdgeVectorIndex
from locus.retrieval.adapters.tantivy_bm25 import project_key
from locus.v1 import events_pb2

pytestmark = pytest.mark.integration

DOOMED = "p_uploads"
KEPT = "p_kept"
STREAM = "LOCUS"
VECTOR_DIMENSION = 384  # all-MiniLM-L6-v2


@contextmanager
def service_log(*names: str) -> Iterator[list[str]]:
    """Log lines of these loggers (the service's logging setup replaces the root handlers, so
    pytest's caplog would not see them)."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{record.levelname} {record.getMessage()}")

    handler = Collect(logging.INFO)
    for name in names:
        logging.getLogger(name).addHandler(handler)
    try:
        yield lines
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(handler)


def query(data_dir: Path, sql: str, *parameters: object) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(f"file:{data_dir / 'retrieval.db'}?mode=ro", uri=True)
    try:
        return connection.execute(sql, parameters).fetchall()
    finally:
        connection.close()


def file_states(data_dir: Path, project_id: str) -> int:
    sql = "SELECT count(*) FROM file_states WHERE project_id = ?"
    return int(query(data_dir, sql, project_id)[0][0])


def tombstones(data_dir: Path) -> set[str]:
    return {row[0] for row in query(data_dir, "SELECT project_id FROM retrieval_deleted_projects")}


def bm25_directories(data_dir: Path, project_id: str) -> list[Path]:
    projects = data_dir / "bm25" / "projects"
    return sorted(projects.glob(f"{project_key(project_id)}*"))


async def eventually(check: Any, what: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:.0f}s: {what}")
        await asyncio.sleep(0.05)


async def publish(harness: Any, subject: str, event: Any, message_id: str) -> int:
    ack = await harness.nats.jetstream().publish(
        subject, event.SerializeToString(), headers={"Nats-Msg-Id": message_id}
    )
    return int(ack.seq)


async def all_acknowledged(harness: Any, through: int) -> list[Any]:
    """Every consumer of the service once none has a message waiting or in flight and the
    files.parsed consumer acknowledged every message up to ``through``."""
    jetstream = harness.nats.jetstream()
    consumers: list[Any] = []

    async def settled() -> bool:
        nonlocal consumers
        consumers = [
            c for c in await jetstream.consumers_info(STREAM) if c.name.startswith("retrieval")
        ]
        files_parsed = next(c for c in consumers if c.name == "retrieval")
        return files_parsed.ack_floor.stream_seq >= through and not any(
            c.num_pending or c.num_ack_pending for c in consumers
        )

    await eventually(settled, f"every retrieval consumer acknowledged up to {through}")
    return consumers


async def delete_project(harness: Any, data_dir: Path, project_id: str) -> None:
    await publish(
        harness,
        "locus.v1.project.deleted",
        events_pb2.ProjectDeleted(project_id=project_id, name="doomed"),
        f"project.deleted:{project_id}",
    )

    async def retracted() -> bool:
        return project_id in tombstones(data_dir) and not bm25_directories(data_dir, project_id)

    await eventually(retracted, f"{project_id} retracted and tombstoned")


async def test_late_events_of_a_deleted_project_are_dropped_and_acknowledged(
    harness_factory: Any, make_events: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    first = await harness_factory(data_dir=data_dir)
    # The scan's vectors wait in their lane: they are consumed after the deletion.
    first.runtime.vectors_lanes.pause()
    for path in ("uploads/client.py", "uploads/policy.py"):
        await first.publish_file(make_events(path, job_id="job_1", snapshot_seq=1))
    await first.updates.wait_for(lambda seen: len(first.reported("job_1")) == 2)
    assert bm25_directories(data_dir, DOOMED)
    await delete_project(first, data_dir, DOOMED)
    updates_before = len(first.updates.messages)

    with service_log("locus.retrieval.indexing", "locus.retrieval.vectors_lane") as lines:
        last = 0
        for path in ("uploads/errors.py", "uploads/client.py"):  # late parts of job_1
            for event in make_events(path, job_id="job_1", snapshot_seq=1):
                last = await publish(first, "locus.v1.files.parsed", event, f"late:{path}")
        kept = make_events("uploads/client.py", job_id="job_kept", snapshot_seq=1, project_id=KEPT)
        await first.publish_file(kept)
        first.runtime.vectors_lanes.resume()
        await first.updates.wait_for(
            lambda seen: first.reported("job_kept") and first.reported("job_kept", "vectors")
        )
        consumers = await all_acknowledged(first, last)

    assert all(c.num_redelivered == 0 for c in consumers)
    assert not bm25_directories(data_dir, DOOMED)  # never made again
    assert bm25_directories(data_dir, KEPT)
    assert file_states(data_dir, DOOMED) == 0
    assert file_states(data_dir, KEPT) == 1
    reported = [events_pb2.IndexUpdated.FromString(m.data) for m in first.updates.messages]
    assert {u.project_id for u in reported[updates_before:]} == {KEPT}
    assert first.dead_letters.messages == []
    dropped_parts = [line for line in lines if "dropping files.parsed" in line]
    dropped_vectors = [line for line in lines if "dropping vectors.requested" in line]
    assert len(dropped_parts) == 2
    assert len(dropped_vectors) == 2  # the parts queued for vectors before the deletion
    assert all(line.startswith("INFO") and DOOMED in line for line in dropped_parts)
    assert all(line.startswith("INFO") and DOOMED in line for line in dropped_vectors)
    await first.close()

    vectors = EdgeVectorIndex(data_dir / "vectors", VECTOR_DIMENSION)
    await vectors.open()
    try:
        assert await vectors.count(DOOMED) == 0
        assert await vectors.count(KEPT) > 0
    finally:
        await vectors.close()

    # The tombstone is in the store: a restarted service drops the project's parts too.
    second = await harness_factory(data_dir=data_dir)
    assert DOOMED in tombstones(data_dir)
    last = 0
    for event in make_events("uploads/policy.py", job_id="job_1", snapshot_seq=1):
        last = await publish(second, "locus.v1.files.parsed", event, "late-after-restart")
    await second.publish_file(
        make_events("uploads/policy.py", job_id="job_kept_2", snapshot_seq=1, project_id=KEPT)
    )
    await second.updates.wait_for(lambda seen: second.reported("job_kept_2"))
    consumers = await all_acknowledged(second, last)

    assert all(c.num_redelivered == 0 for c in consumers)
    assert not bm25_directories(data_dir, DOOMED)
    assert file_states(data_dir, DOOMED) == 0
    assert file_states(data_dir, KEPT) == 2
    assert second.dead_letters.messages == []
