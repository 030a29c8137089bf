"""A late files.parsed of a deleted project (a finished scan's part still queued when
project.deleted was handled) is acknowledged, logged and dropped: no graph rows come back, no
report, no dead letter; another project's parts are applied as before; the tombstone outlives a
restart. On the real nats-server and the impact service built in-process."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest

from locus.v1 import events_pb2

pytestmark = pytest.mark.integration

ALL_FILES = ("__init__.py", "client.py", "errors.py", "policy.py")
ENFORCE = "uploads.policy.enforce_retry_limit"
GRAPH_TABLES = (
    "impact_projects",
    "impact_files",
    "impact_symbols",
    "impact_relations",
    "impact_dependencies",
)


@contextmanager
def projection_log() -> Iterator[list[str]]:
    """The projection's log lines (the service's logging setup replaces the root handlers,
    so pytest's caplog would not see them)."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{record.levelname} {record.getMessage()}")

    handler = Collect(logging.INFO)
    logger = logging.getLogger("locus.impact.projection")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


def query(harness: Any, sql: str, *parameters: object) -> list[tuple[Any, ...]]:
    """Rows of a query on the service's SQLite store (read-only)."""
    database = harness.settings.data_dir / "impact.db"
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return connection.execute(sql, parameters).fetchall()
    finally:
        connection.close()


def rows_of(harness: Any, project_id: str) -> dict[str, int]:
    counted = "SELECT count(*) FROM {} WHERE project_id = ?"
    return {
        table: query(harness, counted.format(table), project_id)[0][0] for table in GRAPH_TABLES
    }


def tombstones(harness: Any) -> set[str]:
    return {row[0] for row in query(harness, "SELECT project_id FROM impact_deleted_projects")}


async def eventually(check: Any, what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:.0f}s: {what}")
        await asyncio.sleep(0.05)


async def publish_late(harness: Any, events: list[events_pb2.FilesParsed]) -> int:
    """Publish ``events`` as a finished scan's parts still queued would arrive (message ids of
    their own); the stream sequence of the last one."""
    sequence = 0
    for event in events:
        ack = await harness.publisher.publish(
            harness.publisher.subjects.files_parsed, event, message_id=f"late:{uuid.uuid4().hex}"
        )
        sequence = int(ack.seq)
    return sequence


async def wait_acknowledged(harness: Any, sequence: int) -> Any:
    """The files.parsed consumer once every message up to ``sequence`` is acknowledged."""
    jetstream = harness.client.jetstream()
    state: Any = None

    async def acknowledged() -> bool:
        nonlocal state
        state = await jetstream.consumer_info(
            harness.settings.stream_name, harness.settings.consumer_name
        )
        return bool(state.ack_floor.stream_seq >= sequence and not state.num_ack_pending)

    await eventually(acknowledged, f"the impact consumer acknowledged up to {sequence}")
    return state


async def delete_project(harness: Any, project_id: str) -> None:
    await harness.publisher.publish(
        harness.publisher.subjects.project_deleted,
        events_pb2.ProjectDeleted(project_id=project_id, name="doomed"),
        message_id=f"project.deleted:{project_id}",
    )

    async def retracted() -> bool:
        return project_id in tombstones(harness) and not any(rows_of(harness, project_id).values())

    await eventually(retracted, f"{project_id} retracted and tombstoned")


async def test_a_late_part_of_a_deleted_project_is_dropped_and_acknowledged(
    impact_settings: Any, start_impact: Any, uploads: dict[str, Any]
) -> None:
    first = await start_impact(impact_settings)
    doomed = first.project_id
    try:
        await first.publish_files("j1", 1, *ALL_FILES)
        seed = first.files["policy.py"].node_id(ENFORCE)
        assert (await first.compute(seed_node_ids=[seed])).symbols
        await delete_project(first, doomed)
        reports_before = len(first.reports.messages)

        with projection_log() as lines:
            late = await publish_late(first, first.files["client.py"].event("j1", 1, parts=2))
            other = uploads["policy.py"]
            await first.publish(other.event("j_other", 1)[0])
            await first.wait_reported(other.file_id)  # another project: applied as before
            state = await wait_acknowledged(first, late)

        assert state.num_redelivered == 0
        assert not any(rows_of(first, doomed).values())
        assert rows_of(first, other.project_id)["impact_files"] == 1
        reported = [events_pb2.IndexUpdated.FromString(m.data) for m in first.reports.messages][
            reports_before:
        ]
        assert {update.project_id for update in reported} == {other.project_id}
        assert first.dead_letters.messages == []
        dropped = [line for line in lines if "dropping files.parsed" in line]
        assert len(dropped) == 2
        assert all(line.startswith("INFO") and doomed in line for line in dropped)
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await first.compute(seed_node_ids=[seed])
        assert error.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        await first.close()

    # The tombstone is in the store: a restarted service drops the project's parts too.
    second = await start_impact(impact_settings, doomed)
    try:
        assert doomed in tombstones(second)
        late = await publish_late(second, second.files["errors.py"].event("j1", 1))
        other = uploads["client.py"]
        await second.publish(other.event("j_other", 1)[0])
        await second.wait_reported(other.file_id)
        state = await wait_acknowledged(second, late)

        assert state.num_redelivered == 0
        assert not any(rows_of(second, doomed).values())
        assert rows_of(second, other.project_id)["impact_files"] == 2
        assert second.dead_letters.messages == []
    finally:
        await second.close()
