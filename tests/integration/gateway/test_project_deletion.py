"""Deleting a project through the real gateway leaves no trace of it in any service: ingestion
(rows, snapshots), ast, retrieval (BM25 chunks and whole files, vectors, file versions) and impact
(graph rows), shown through each service's own RPCs and then by reading its store; another project
stays whole; a redelivered project.deleted is harmless; only an admin of the project may delete
it, and not while a scan of it runs."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import nats
import pytest
import tantivy
from gateway_calls import refusal
from nats.js.errors import NotFoundError

from locus.retrieval.adapters.edge_vectors import EdgeVectorIndex
from locus.retrieval.adapters.tantivy_bm25 import project_key
from locus.rpc import SERVICE_TOKEN_HEADER
from locus.v1 import (
    ast_pb2,
    ast_pb2_grpc,
    events_pb2,
    gateway_pb2,
    impact_pb2,
    impact_pb2_grpc,
    ingestion_pb2,
    ingestion_pb2_grpc,
    retrieval_pb2,
    retrieval_pb2_grpc,
)

pytestmark = pytest.mark.integration

RETRACTION_SECONDS = 60.0
VECTOR_DIMENSION = 384  # all-MiniLM-L6-v2
UNIQUE_FILE = "src/shop/only_here.py"
UNIQUE_TEXT = (
    f'"""Only in the deleted project."""\n\n\ndef lonely_{uuid.uuid4().hex[:8]}():\n    return 1\n'
)
CONSUMERS = ("ast-projects", "retrieval-projects", "impact-projects")


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + RETRACTION_SECONDS
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {RETRACTION_SECONDS:.0f}s: {what}")
        await asyncio.sleep(0.25)


def rows_of(database: Path, tables: tuple[str, ...], project_id: str) -> dict[str, int]:
    """Rows with this project_id per table, read through a read-only connection."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return {
            table: connection.execute(
                f"SELECT count(*) FROM {table} WHERE project_id = ?", (project_id,)
            ).fetchone()[0]
            for table in tables
        }


def tantivy_count(directory: Path, project_id: str) -> int:
    """The project's documents in every BM25 index (chunks and whole files) of every project."""
    total = 0
    for found in sorted((directory / "projects").iterdir()):
        index = tantivy.Index.open(str(found))
        query = tantivy.Query.term_query(index.schema, "project_id", project_id)
        total += int(index.searcher().search(query, 1, count=True).count)
    return total


class Internal:
    """The downstream services' own RPCs, called as the mesh (with the deployment's token)."""

    def __init__(self, stack: Any, token: str) -> None:
        self._metadata = ((SERVICE_TOKEN_HEADER, token),)
        self._channels = {
            name: grpc.aio.insecure_channel(stack.addresses[name])
            for name in ("ingestion", "ast", "retrieval", "impact")
        }
        self.ingestion = ingestion_pb2_grpc.IngestionServiceStub(self._channels["ingestion"])
        self.ast = ast_pb2_grpc.AstServiceStub(self._channels["ast"])
        self.retrieval = retrieval_pb2_grpc.RetrievalServiceStub(self._channels["retrieval"])
        self.impact = impact_pb2_grpc.ImpactServiceStub(self._channels["impact"])

    async def call(self, method: Any, request: Any) -> Any:
        return await method(request, metadata=self._metadata, timeout=60)

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()

    async def symbols(self, project_id: str) -> list[Any]:
        reply = await self.call(
            self.ast.FindSymbols, ast_pb2.FindSymbolsRequest(project_id=project_id, name="")
        )
        return list(reply.symbols)

    async def hits(self, project_id: str, mode: int, query: str = "place order charge card") -> Any:
        return await self.call(
            self.retrieval.Search,
            retrieval_pb2.SearchRequest(
                query=query,
                mode=mode,
                filters=retrieval_pb2.SearchFilters(project_id=project_id),
                top_k=50,
                top_files=20,
                top_whole_files=20 if mode == retrieval_pb2.SEARCH_MODE_BM25 else 0,
            ),
        )

    async def impact_code(self, project_id: str, node_id: str) -> grpc.StatusCode:
        try:
            await self.call(
                self.impact.Compute,
                impact_pb2.ComputeImpactRequest(project_id=project_id, seed_node_ids=[node_id]),
            )
        except grpc.aio.AioRpcError as error:
            return error.code()
        return grpc.StatusCode.OK


async def test_deleting_a_project_leaves_no_trace_in_any_service(
    gateway: Any, stack: Any, sample_tree: Path
) -> None:
    stack.require("ingestion", "ast", "retrieval", "impact")
    internal = Internal(stack, gateway.settings.service_token.get_secret_value())
    try:
        await _delete_and_prove(gateway, stack, sample_tree, internal)
    finally:
        await internal.close()


async def _delete_and_prove(gateway: Any, stack: Any, tree: Path, internal: Internal) -> None:
    other_tree = tree.with_name(tree.name + "-kept")
    shutil.copytree(tree, other_tree)
    (tree / UNIQUE_FILE).write_text(UNIQUE_TEXT, encoding="utf-8")
    doomed = await gateway.create_project(tree)
    kept = await gateway.create_project(other_tree)
    for project in (doomed, kept):
        job = await gateway.scan_and_wait(project.name)
        assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job
    pid, kept_id = doomed.project_id, kept.project_id

    files = await internal.call(
        internal.ingestion.ListFiles, ingestion_pb2.ListFilesRequest(project_id=pid)
    )
    unique_sha = next(f.sha256 for f in files.files if f.relative_path == UNIQUE_FILE)
    shared_sha = next(f.sha256 for f in files.files if f.relative_path == "src/shop/orders.py")
    symbols = await internal.symbols(pid)
    node_id = next(s.node_id for s in symbols if s.name == "place_order")
    vector_hits = await internal.hits(pid, retrieval_pb2.SEARCH_MODE_VECTOR)
    assert vector_hits.hits, "the deleted project had vectors before"

    # Only an admin of the project may delete it.
    for role in (gateway_pb2.ROLE_READER, gateway_pb2.ROLE_WRITER):
        key = await gateway.stub.CreateApiKey(
            gateway_pb2.CreateApiKeyRequest(
                name=f"k-{uuid.uuid4().hex[:6]}",
                grants=[gateway_pb2.Grant(project=doomed.name, role=role)],
            )
        )
        error = await refusal(
            gateway.stub_as(key.api_key).DeleteProject(
                ingestion_pb2.DeleteProjectRequest(project_id=doomed.name)
            )
        )
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error

    # Not while a scan of it runs (a changed file keeps the scan busy for a while).
    (tree / "src/shop/payments.py").write_text("def charge_card(c, a):\n    return a\n")
    scan = await gateway.stub.StartScan(ingestion_pb2.StartScanRequest(project_id=doomed.name))
    error = await refusal(
        gateway.stub.DeleteProject(ingestion_pb2.DeleteProjectRequest(project_id=doomed.name))
    )
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION, error
    assert scan.job_id in (error.details() or ""), error.details()
    await until(
        lambda: _scan_done(gateway, scan.job_id), f"the second scan {scan.job_id} completes"
    )

    deleted = await gateway.stub.DeleteProject(
        ingestion_pb2.DeleteProjectRequest(project_id=doomed.name)
    )
    assert (deleted.project_id, deleted.name) == (pid, doomed.name)
    assert deleted.sources_deleted == 1
    assert deleted.files_deleted == len(files.files)

    # ingestion: gone at once.
    for call in (
        gateway.stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=pid)),
        internal.call(internal.ingestion.ListFiles, ingestion_pb2.ListFilesRequest(project_id=pid)),
    ):
        assert (await refusal(call)).code() == grpc.StatusCode.NOT_FOUND

    # ast, retrieval, impact: retracted asynchronously, each through its own RPCs.
    async def ast_empty() -> bool:
        return not await internal.symbols(pid)

    async def retrieval_empty() -> bool:
        for mode in (retrieval_pb2.SEARCH_MODE_BM25, retrieval_pb2.SEARCH_MODE_VECTOR):
            try:
                reply = await internal.hits(pid, mode)
            except grpc.aio.AioRpcError as error:
                # Retrieval's answer for a project it holds no chunk of ("no indexed chunks").
                if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    continue
                raise
            if reply.hits or reply.files or reply.whole_files:
                return False
        return True

    async def impact_empty() -> bool:
        return await internal.impact_code(pid, node_id) == grpc.StatusCode.NOT_FOUND

    await until(ast_empty, "ast holds no symbol of the deleted project")
    await until(retrieval_empty, "retrieval finds nothing of the deleted project")
    await until(impact_empty, "impact holds no graph of the deleted project")

    # ... and in their stores, read directly once the RPCs say so.
    data = {name: stack.running[name].log_path.parent for name in stack.running}
    assert rows_of(
        data["ingestion"] / "ingestion.db", ("projects", "sources", "files", "scan_jobs"), pid
    ) == {"projects": 0, "sources": 0, "files": 0, "scan_jobs": 0}
    blobs = data["ingestion"] / "blobs"
    assert not list(blobs.rglob(unique_sha)), "the deleted project's own snapshot is gone"
    assert list(blobs.rglob(shared_sha)), "a snapshot the other project uses stays"
    assert set(
        rows_of(
            data["ast"] / "ast.db",
            ("ast_files", "ast_symbols", "ast_relations", "ast_file_dependencies", "ast_chunks"),
            pid,
        ).values()
    ) == {0}
    assert set(
        rows_of(
            data["impact"] / "impact.db",
            (
                "impact_projects",
                "impact_files",
                "impact_symbols",
                "impact_relations",
                "impact_dependencies",
            ),
            pid,
        ).values()
    ) == {0}
    assert rows_of(data["retrieval"] / "retrieval.db", ("file_states", "snapshots"), pid) == {
        "file_states": 0,
        "snapshots": 0,
    }
    assert tantivy_count(data["retrieval"] / "bm25", pid) == 0
    assert tantivy_count(data["retrieval"] / "bm25", kept_id) > 0
    assert not (data["retrieval"] / "bm25" / "projects" / project_key(pid)).exists()
    # The vector shard, from a copy (the running service holds the original open).
    shard = stack.work_dir / f"vectors-copy-{uuid.uuid4().hex[:6]}"
    shutil.copytree(data["retrieval"] / "vectors", shard)
    vectors = EdgeVectorIndex(shard, VECTOR_DIMENSION)
    await vectors.open()
    try:
        assert await vectors.count(pid) == 0
        assert await vectors.count(kept_id) > 0
    finally:
        await vectors.close()

    # The other project is whole.
    assert await internal.symbols(kept_id)
    assert (await internal.hits(kept_id, retrieval_pb2.SEARCH_MODE_BM25)).hits
    assert (await internal.hits(kept_id, retrieval_pb2.SEARCH_MODE_VECTOR)).hits
    kept_node = next(s.node_id for s in await internal.symbols(kept_id) if s.name == "place_order")
    assert await internal.impact_code(kept_id, kept_node) == grpc.StatusCode.OK
    content = await internal.call(
        internal.ingestion.GetFileContent, ingestion_pb2.GetFileContentRequest(sha256=shared_sha)
    )
    assert "place_order" in content.text

    # A redelivered project.deleted is handled again, deletes nothing more and is acknowledged.
    await _redeliver_and_check(stack, pid)
    assert await internal.symbols(kept_id)
    assert (await internal.hits(kept_id, retrieval_pb2.SEARCH_MODE_VECTOR)).hits


async def _scan_done(gateway: Any, job_id: str) -> bool:
    job = await gateway.stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
    return bool(
        job.state == ingestion_pb2.SCAN_STATE_FAILED
        or (
            job.state == ingestion_pb2.SCAN_STATE_COMPLETED
            and job.level == events_pb2.SCAN_LEVEL_EMBEDDED
        )
    )


async def _redeliver_and_check(stack: Any, project_id: str) -> None:
    connection = await nats.connect(stack.nats_url)
    try:
        jetstream = connection.jetstream()
        subject = f"{stack.subject_prefix}.project.deleted"
        event = events_pb2.ProjectDeleted(project_id=project_id, name="again")
        await jetstream.publish(
            subject,
            event.SerializeToString(),
            stream=stack.stream_name,
            headers={"Nats-Msg-Id": f"project.deleted:{project_id}:again"},
        )

        async def all_acknowledged() -> bool:
            for consumer in CONSUMERS:
                info = await jetstream.consumer_info(stack.stream_name, consumer)
                if info.num_pending or info.num_ack_pending or info.delivered.stream_seq == 0:
                    return False
                if info.ack_floor.stream_seq < info.delivered.stream_seq:
                    return False
            return True

        await until(all_acknowledged, "every service acknowledged the redelivered event")
        with pytest.raises(NotFoundError):
            await jetstream.get_last_msg(
                stack.stream_name, f"{stack.subject_prefix}.dlq.project.deleted"
            )
    finally:
        await connection.close()
