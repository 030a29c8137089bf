"""Incremental scans end to end: only modified, deleted and added files travel through
files.changed and files.parsed; a deleted file's symbols and chunks disappear from ast, and
references to them stop resolving; a rescan without changes publishes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest

from locus.v1 import ast_pb2, common_pb2, events_pb2, ingestion_pb2

pytestmark = pytest.mark.integration

PREFIX = "locus.v1"
POLICY_V2 = '''"""Retry policy shared by every upload client."""

RETRY_LIMIT = 5


def backoff_for(attempt: int) -> float:
    return 0.5 * 2**attempt


def enforce_retry_limit(attempts: int) -> int:
    """Clamp the requested attempts to the policy."""
    return max(1, min(attempts, RETRY_LIMIT))
'''
RETRY = '''"""Retry helpers."""

from .policy import backoff_for


def schedule(attempts: int) -> list[float]:
    return [backoff_for(attempt) for attempt in range(attempts)]
'''


async def symbol_names(stack: Any, project_id: str, path_prefix: str) -> dict[str, tuple[int, int]]:
    reply = await stack.ast_stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(
            project_id=project_id,
            path_prefix=path_prefix,
            page=common_pb2.PageRequest(page_size=500),
        )
    )
    return {s.qualified_name: (s.location.start_line, s.location.end_line) for s in reply.symbols}


async def test_rescan_sends_exactly_the_changed_files_and_retracts_the_deleted_one(
    stack: Any, source_tree: Path
) -> None:
    project_id = await stack.create_project(source_tree)
    first = await stack.scan(project_id)
    assert first.state == ingestion_pb2.SCAN_STATE_COMPLETED
    retry_exhausted = (
        await stack.ast_stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(
                project_id=project_id, name="uploads.errors.RetryExhausted", exact=True
            )
        )
    ).symbols[0]
    errors_file_id = retry_exhausted.location.file_id
    errors_outline = await stack.ast_stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=project_id, file_id=errors_file_id)
    )
    assert len(errors_outline.symbols) == 5

    changed = await stack.record(f"{PREFIX}.files.changed", events_pb2.FilesChanged)
    parsed = await stack.record(f"{PREFIX}.files.parsed", events_pb2.FilesParsed)
    package = source_tree / "src" / "uploads"
    (package / "policy.py").write_text(POLICY_V2)
    (package / "errors.py").unlink()
    (package / "retry.py").write_text(RETRY)

    second = await stack.scan(project_id)

    assert second.state == ingestion_pb2.SCAN_STATE_COMPLETED, second
    expected = {
        "src/uploads/errors.py": common_pb2.CHANGE_TYPE_DELETED,
        "src/uploads/policy.py": common_pb2.CHANGE_TYPE_MODIFIED,
        "src/uploads/retry.py": common_pb2.CHANGE_TYPE_ADDED,
    }
    sent = [f for batch in changed.of_job(second.job_id) for f in batch.files]
    assert {f.relative_path: f.change_type for f in sent} == expected
    assert len(sent) == 3
    await parsed.wait_for_count(3)
    await asyncio.sleep(0.3)  # nothing else may follow
    assert {e.file.relative_path: e.file.change_type for e in parsed.events} == expected
    assert len(parsed.events) == 3
    assert {e.job_id for e in parsed.events} == {second.job_id}
    deleted = next(e for e in parsed.events if e.file.relative_path == "src/uploads/errors.py")
    assert (list(deleted.symbols), list(deleted.chunks)) == ([], [])
    modified = next(e for e in parsed.events if e.file.relative_path == "src/uploads/policy.py")
    assert {s.qualified_name: (s.location.start_line, s.location.end_line)
            for s in modified.symbols} == {
        "uploads.policy": (1, 12),
        "uploads.policy.RETRY_LIMIT": (3, 3),  # a module constant
        "uploads.policy.backoff_for": (6, 7),
        "uploads.policy.enforce_retry_limit": (10, 12),
    }  # fmt: skip
    added = next(e for e in parsed.events if e.file.relative_path == "src/uploads/retry.py")
    call = next(r for r in added.relations if r.target_name == "backoff_for")
    backoff = next(s for s in modified.symbols if s.name == "backoff_for")
    assert call.target_node_id == backoff.node_id  # policy.py was stored first (batch order)
    stats = second.stats
    assert (stats.files_added, stats.files_modified, stats.files_deleted) == (1, 1, 1)
    assert stats.files_parsed == 3

    # The deleted file is gone from ast: symbols, nodes, outline and chunks.
    assert await symbol_names(stack, project_id, "src/uploads/errors.py") == {}
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stack.ast_stub.GetNode(ast_pb2.GetNodeRequest(node_id=retry_exhausted.node_id))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stack.ast_stub.GetFileOutline(
            ast_pb2.GetFileOutlineRequest(project_id=project_id, file_id=errors_file_id)
        )
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert stack.ast_rows("SELECT * FROM ast_chunks WHERE file_id = ?", errors_file_id) == []
    # client.py did not change, but its call to RetryExhausted no longer resolves.
    retry_method = (
        await stack.ast_stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(
                project_id=project_id, name="uploads.client.UploadClient._retry", exact=True
            )
        )
    ).symbols[0]
    node = await stack.ast_stub.GetNode(
        ast_pb2.GetNodeRequest(node_id=retry_method.node_id, include_relations=True)
    )
    raised_error = next(r for r in node.outgoing if r.target_name == "RetryExhausted")
    assert raised_error.target_qualified_name == "uploads.errors.RetryExhausted"
    assert raised_error.target_node_id == ""
    assert await symbol_names(stack, project_id, "src/uploads/policy.py") == {
        "uploads.policy": (1, 12),
        "uploads.policy.RETRY_LIMIT": (3, 3),
        "uploads.policy.backoff_for": (6, 7),
        "uploads.policy.enforce_retry_limit": (10, 12),
    }
    assert await symbol_names(stack, project_id, "src/uploads/retry.py") == {
        "uploads.retry": (1, 7),
        "uploads.retry.schedule": (6, 7),
    }

    # Nothing changed: the job completes and nothing is published for it.
    third = await stack.scan(project_id)
    assert third.state == ingestion_pb2.SCAN_STATE_COMPLETED
    assert third.stats.files_unchanged == 5
    assert third.stats.files_parsed == 0
    await asyncio.sleep(0.5)
    assert changed.of_job(third.job_id) == []
    assert parsed.of_job(third.job_id) == []
