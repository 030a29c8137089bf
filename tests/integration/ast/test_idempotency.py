"""Idempotency of the ast consumer against real failures: the same files.changed delivered
twice (past JetStream's deduplication), and an ast process killed with SIGKILL in the middle of
a large batch, restarted, and finishing the batch from redelivery. Either way the store must
hold exactly the rows of a clean run."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from locus.v1 import events_pb2, ingestion_pb2

pytestmark = pytest.mark.integration

PREFIX = "locus.v1"
MODULES = 100


def write_many_modules(root: Path, count: int) -> int:
    """A package whose modules call into the previous one; returns the number of files."""
    package = root / "src" / "fleet"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A fleet of workers."""\n')
    (root / "README.md").write_text("# Fleet\n\nWorkers that call each other.\n")
    for index in range(count):
        name = f"{index:03d}"
        previous = f"{index - 1:03d}"
        imports = f"from .module_{previous} import step_{previous}\n\n" if index else ""
        chained = f"step_{previous}(value) + " if index else ""
        (package / f"module_{name}.py").write_text(
            f'"""Module {name}."""\n\n{imports}\n'
            f"class Worker{name}:\n"
            f'    """Runs step {name}."""\n\n'
            f"    limit = {index}\n\n"
            f"    def run(self, value: int) -> int:\n"
            f"        return step_{name}(value)\n\n\n"
            f"def step_{name}(value: int) -> int:\n"
            f"    return {chained}value + {index}\n"
        )
    return count + 2


async def wait_until_acked(stack: Any, stream_sequence: int, within: float = 20.0) -> None:
    """Until the ast consumer acknowledged every message up to ``stream_sequence``."""
    deadline = time.monotonic() + within
    while await stack.ast_ack_floor() < stream_sequence:
        assert time.monotonic() < deadline, "ast did not acknowledge the replayed batch"
        await asyncio.sleep(0.05)


async def test_the_same_batch_delivered_twice_leaves_the_tables_of_a_clean_run(
    stack: Any, source_tree: Path
) -> None:
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    parsed = await stack.record(f"{PREFIX}.files.parsed", events_pb2.FilesParsed)
    project_id = await stack.create_project(source_tree)
    job = await stack.scan(project_id)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED
    await parsed.wait_for_count(5)
    clean = stack.ast_tables()
    # 19 of code, 4 module constants (LOGGER, DEFAULT_CLIENT, RETRY_LIMIT, BACKOFF_SECONDS),
    # 3 sections of the README
    assert len(clean["ast_symbols"]) == 26
    assert len(clean["ast_chunks"]) == 21  # the README: two sections, one window before
    [batch] = changed.raw

    # A new message id gets past JetStream's deduplication: ast processes the batch again.
    replay = await stack.publish_raw(
        f"{PREFIX}.files.changed", batch.data, message_id="files.changed:replayed-by-test"
    )
    assert not replay.duplicate
    await wait_until_acked(stack, replay.seq)

    assert stack.ast_tables() == clean
    # Its files.parsed and index.updated reuse their deterministic ids: deduplicated.
    await asyncio.sleep(0.3)
    assert len(parsed.events) == 5


async def test_a_killed_ast_process_converges_to_a_clean_run_after_redelivery(
    start_stack: Any, tmp_path: Path
) -> None:
    tree = tmp_path / "fleet"
    total = write_many_modules(tree, MODULES)
    stack = await start_stack(ingestion_batch_size=1000)  # one batch holds every file
    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    project_id = await stack.create_project(tree)
    job = await stack.ingestion_stub.StartScan(
        ingestion_pb2.StartScanRequest(project_id=project_id)
    )

    def stored_files() -> int:
        return (
            len(stack.ast_rows("SELECT file_id FROM ast_files"))
            if stack.ast_database.exists()
            else 0
        )

    deadline = time.monotonic() + 30
    while stored_files() < 5:
        assert time.monotonic() < deadline, stack.ast.log_tail()
        await asyncio.sleep(0.01)
    stack.ast.kill()
    stored_at_kill = stored_files()
    assert 0 < stored_at_kill < total, "the kill must land in the middle of the batch"
    [batch] = await changed.wait_for_count(1)
    assert len(batch.files) == total

    async def clean_reference_run() -> Path:
        """A fresh ast (own store, subjects and stream) fed the very same batch."""
        reference = await stack.start_extra_ast(
            "reference", subject_prefix="reference.v1", stream="REFERENCE"
        )
        reports = await stack.record(
            "reference.v1.index.updated", events_pb2.IndexUpdated, stream="REFERENCE"
        )
        await stack.publish_raw(
            "reference.v1.files.changed",
            batch_message.data,
            message_id="reference:batch-0",
            stream="REFERENCE",
        )
        [report] = await reports.wait_for_count(1, within=60)
        assert {f.status for f in report.files} == {events_pb2.INDEX_STATUS_INDEXED}
        return Path(reference.env["LOCUS_AST_DATA_DIR"]) / "ast.db"

    [batch_message] = changed.raw
    await stack.restart_ast()  # the batch comes back once its ack deadline passes
    finished, reference_database = await asyncio.gather(
        stack.wait_for_job(job.job_id, within=60), clean_reference_run()
    )

    assert finished.state == ingestion_pb2.SCAN_STATE_COMPLETED, finished
    assert finished.stats.files_parsed == total
    assert finished.stats.files_failed == 0
    assert stack.ast.starts == 2
    crashed = stack.ast_tables()
    assert len(crashed["ast_files"]) == total
    clean = stack.ast_tables(reference_database)
    for table, rows in clean.items():
        assert crashed[table] == rows, f"{table} differs from a clean run"
