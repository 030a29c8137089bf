"""A late files.changed of a deleted project (a finished scan's batch still queued when
project.deleted was handled) is acknowledged, logged and dropped: no row of the project comes
back, nothing is fetched, published or dead-lettered; another project's scans go on as before;
the tombstone outlives a restart of the ast process. Real nats-server, ingestion and ast."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from nats.js.errors import NotFoundError

from locus.v1 import events_pb2, ingestion_pb2

pytestmark = pytest.mark.integration

PREFIX = "locus.v1"
STREAM = "LOCUS"
PROJECT_TABLES = (
    "ast_files",
    "ast_symbols",
    "ast_relations",
    "ast_file_dependencies",
    "ast_chunks",
)


def rows_of(stack: Any, project_id: str) -> dict[str, int]:
    counted = "SELECT count(*) FROM {} WHERE project_id = ?"
    return {
        table: stack.ast_rows(counted.format(table), project_id)[0][0] for table in PROJECT_TABLES
    }


def tombstones(stack: Any) -> set[str]:
    return {row[0] for row in stack.ast_rows("SELECT project_id FROM ast_deleted_projects")}


def dropped_lines(stack: Any, project_id: str) -> list[str]:
    return [
        line
        for line in stack.ast.log_path.read_text(errors="replace").splitlines()
        if f"dropping files.changed of deleted project {project_id}" in line
    ]


async def eventually(check: Any, what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:.0f}s: {what}")
        await asyncio.sleep(0.05)


async def acknowledged(stack: Any, sequence: int) -> Any:
    """The ast consumer once it acknowledged every message up to ``sequence``."""
    deadline = time.monotonic() + 30
    while True:
        info = await stack.js.consumer_info(STREAM, "ast")
        if info.ack_floor.stream_seq >= sequence and not info.num_ack_pending:
            return info
        assert time.monotonic() < deadline, f"ast did not acknowledge up to {sequence}"
        await asyncio.sleep(0.05)


async def rescan(stack: Any, tree: Path, project_id: str, marker: str) -> None:
    """A change in the other project's tree, scanned: ingestion completes the job only once ast
    reported the batch (required stage), so ast processed it."""
    (tree / "src" / "uploads" / "added.py").write_text(f"def {marker}():\n    return 1\n")
    job = await stack.scan(project_id)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job
    found = stack.ast_rows(
        "SELECT count(*) FROM ast_symbols WHERE project_id = ? AND name = ?", project_id, marker
    )
    assert found == [(1,)]


async def test_a_late_batch_of_a_deleted_project_is_dropped_and_acknowledged(
    stack: Any, source_tree: Path
) -> None:
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    updates = await stack.record(f"{PREFIX}.index.updated", events_pb2.IndexUpdated)
    other_tree = source_tree.with_name("other-repository")
    shutil.copytree(source_tree, other_tree)
    doomed = await stack.create_project(source_tree)
    kept = await stack.create_project(other_tree)
    for project_id in (doomed, kept):
        job = await stack.scan(project_id)
        assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job
    await changed.wait_for_count(2)
    [late_batch] = [
        m for m, e in zip(changed.raw, changed.events, strict=True) if e.project_id == doomed
    ]
    assert rows_of(stack, doomed)["ast_symbols"] > 0

    await stack.ingestion_stub.DeleteProject(ingestion_pb2.DeleteProjectRequest(project_id=doomed))
    await eventually(
        lambda: doomed in tombstones(stack) and not any(rows_of(stack, doomed).values()),
        "ast retracted and tombstoned the deleted project",
    )
    updates_before = len(updates.events)

    late = await stack.publish_raw(
        f"{PREFIX}.files.changed", late_batch.data, message_id="files.changed:late-by-test"
    )
    assert not late.duplicate
    await rescan(stack, other_tree, kept, "added_after_deletion")
    info = await acknowledged(stack, late.seq)

    assert info.num_redelivered == 0
    assert not any(rows_of(stack, doomed).values())
    assert {u.project_id for u in updates.events[updates_before:]} == {kept}
    with pytest.raises(NotFoundError):
        await stack.js.get_last_msg(STREAM, f"{PREFIX}.dlq.files.changed")
    [line] = dropped_lines(stack, doomed)
    assert " INFO " in line

    # The tombstone is in the store: the restarted process drops the project's batches too.
    stack.ast.stop()
    await stack.restart_ast()
    again = await stack.publish_raw(
        f"{PREFIX}.files.changed", late_batch.data, message_id="files.changed:late-after-restart"
    )
    await rescan(stack, other_tree, kept, "added_after_restart")
    info = await acknowledged(stack, again.seq)

    assert info.num_redelivered == 0
    assert not any(rows_of(stack, doomed).values())
    assert len(dropped_lines(stack, doomed)) == 2
    with pytest.raises(NotFoundError):
        await stack.js.get_last_msg(STREAM, f"{PREFIX}.dlq.files.changed")
