"""Batches that can never be processed end on ``locus.v1.dlq.files.changed`` (at once when
malformed, after bounded retries when ingestion cannot serve contents), their files are
reported failed, and the ast consumer goes on with the next event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from locus.v1 import common_pb2, events_pb2, ingestion_pb2

pytestmark = pytest.mark.integration

PREFIX = "locus.v1"
FILES_CHANGED = f"{PREFIX}.files.changed"


async def test_undeliverable_batches_are_dead_lettered_and_the_consumer_goes_on(
    start_stack: Any, source_tree: Path
) -> None:
    stack = await start_stack(
        ast_env={"LOCUS_AST_MAX_DELIVER": "2", "LOCUS_AST_RPC_TIMEOUT_SECONDS": "1"}
    )
    letters = await stack.record(f"{PREFIX}.dlq.files.changed", events_pb2.DeadLetter)
    garbage = b"this is not protobuf"
    no_project = events_pb2.FilesChanged(
        job_id="job_without_project",
        snapshot_id="snap_1",
        snapshot_seq=1,
        files=[
            events_pb2.ChangedFile(
                file_id="f_orphan",
                relative_path="orphan.py",
                change_type=common_pb2.CHANGE_TYPE_ADDED,
                sha256="0" * 64,
                language="python",
            )
        ],
    )

    await stack.publish_raw(FILES_CHANGED, garbage, message_id="test:garbage")
    await stack.publish_raw(
        FILES_CHANGED, no_project.SerializeToString(), message_id="test:no-project"
    )

    first, second = await letters.wait_for_count(2)
    assert (first.subject, first.consumer, first.payload, first.deliveries) == (
        FILES_CHANGED,
        "ast",
        garbage,
        1,
    )
    assert first.error.startswith("undecodable FilesChanged")
    assert first.headers["Nats-Msg-Id"] == "test:garbage"
    assert (second.consumer, second.deliveries) == ("ast", 1)
    assert second.error == "malformed: files.changed needs job_id and project_id"
    assert events_pb2.FilesChanged.FromString(second.payload) == no_project

    # The consumer goes on: a real scan right after is indexed and completes.
    project_id = await stack.create_project(source_tree)
    job = await stack.scan(project_id)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED
    assert job.stats.files_parsed == 5
    assert stack.ast_rows("SELECT * FROM ast_files WHERE file_id = 'f_orphan'") == []

    # Contents cannot be fetched (ingestion is down): retried max_deliver times, then parked.
    [indexed] = [
        row[0]
        for row in stack.ast_rows(
            "SELECT sha256 FROM ast_files WHERE relative_path = 'src/uploads/policy.py'"
        )
    ]
    stack.ingestion.stop()
    updates = await stack.record(f"{PREFIX}.index.updated", events_pb2.IndexUpdated)
    unreachable = events_pb2.FilesChanged(
        job_id="job_while_ingestion_is_down",
        project_id=project_id,
        snapshot_id="snap_later",
        snapshot_seq=99,
        files=[
            events_pb2.ChangedFile(
                file_id="f_unfetchable",
                relative_path="src/uploads/late.py",
                change_type=common_pb2.CHANGE_TYPE_ADDED,
                sha256=indexed,
                language="python",
            )
        ],
    )
    await stack.publish_raw(
        FILES_CHANGED, unreachable.SerializeToString(), message_id="test:unreachable"
    )
    *_, parked = await letters.wait_for_count(3, within=30)
    assert parked.deliveries == 2
    assert parked.error.startswith("ContentUnavailable: ingestion GetFileContents(")
    assert "DEADLINE_EXCEEDED" in parked.error or "UNAVAILABLE" in parked.error
    assert events_pb2.FilesChanged.FromString(parked.payload) == unreachable
    assert stack.ast_rows("SELECT * FROM ast_files WHERE file_id = 'f_unfetchable'") == []
    # ...and its files are reported failed, so the scan job that sent them completes (with
    # those files failed) instead of waiting for them until it is stale.
    [given_up] = [u for u in await updates.wait_for_count(1) if u.job_id == unreachable.job_id]
    assert (given_up.project_id, given_up.snapshot_id, given_up.stage) == (
        project_id,
        "snap_later",
        "ast",
    )
    [failed] = given_up.files
    assert (failed.file_id, failed.sha256, failed.status) == (
        "f_unfetchable",
        indexed,
        events_pb2.INDEX_STATUS_FAILED,
    )
    assert failed.error.startswith("ast gave up on the batch: ContentUnavailable: ingestion")
