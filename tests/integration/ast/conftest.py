"""A private Locus stack per test for the ast integration tests: a real nats-server, ingestion
and ast as separate processes (``python -m locus.<service>``) on free ports, each with its own
data directory under the test's tmp dir; gRPC stubs to both; durable test consumers that record
what the services publish; and a fixture source tree (the ``uploads`` package of the unit
tests, a README and a binary file).

Use ``stack`` for the defaults, or ``start_stack(...)`` to tune ingestion's batch size or the
ast process's environment.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import nats
import pytest
from google.protobuf.message import Message
from nats.js.api import ConsumerConfig, DeliverPolicy

from locus.messaging import EmbeddedNatsServer
from locus.rpc import wait_until_serving
from locus.v1 import ast_pb2_grpc, ingestion_pb2, ingestion_pb2_grpc

REPO_ROOT = Path(__file__).resolve().parents[3]
UPLOADS = REPO_ROOT / "tests" / "unit" / "ast" / "fixtures" / "uploads"
STREAM = "LOCUS"
README = """# Uploads

Sends files to remote storage with bounded retries.

## Configuration

Set UPLOAD_ENDPOINT to the storage URL.
"""
PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"
AST_TABLES = {
    "ast_files": "file_id",
    "ast_symbols": "node_id",
    "ast_relations": "file_id, ordinal",
    "ast_file_dependencies": "file_id, ordinal",
    "ast_chunks": "chunk_id",
}

MessageT = TypeVar("MessageT", bound=Message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts_connections(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def write_fixture_tree(root: Path) -> Path:
    """``src/uploads/*.py`` (module names ``uploads.*``), a README.md and a binary file."""
    package = root / "src" / "uploads"
    package.mkdir(parents=True)
    for source in sorted(UPLOADS.glob("*.py")):
        shutil.copyfile(source, package / source.name)
    (root / "README.md").write_text(README)
    (root / "assets").mkdir()
    (root / "assets" / "logo.png").write_bytes(PNG_BYTES)
    return root


async def wait_for(
    condition: Callable[[], bool], *, within: float = 20.0, what: str = "condition"
) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:.0f}s waiting for {what}")
        await asyncio.sleep(0.02)


def dump_ast_tables(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the ast store's tables, in primary-key order (read-only connection)."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return {
            table: connection.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            for table, order in AST_TABLES.items()
        }
    finally:
        connection.close()


@dataclass
class ServiceProcess:
    """One service as an OS process: ``python -m <module>`` with its own environment."""

    name: str
    module: str
    env: dict[str, str]
    port: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None, f"{self.name} runs"
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"--- start #{self.starts} ---\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module],
                env=self.env,
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    async def wait_serving(self, within: float = 30.0) -> None:
        # Poll the port first: a gRPC channel that found nothing listening backs off for
        # seconds before it tries again.
        deadline = time.monotonic() + within
        while not _accepts_connections(self.port):
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} did not listen:\n{self.log_tail()}")
            await asyncio.sleep(0.05)
        try:
            await wait_until_serving(self.address, within_seconds=within)
        except TimeoutError as error:
            raise AssertionError(f"{self.name} did not start:\n{self.log_tail()}") from error

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, in-flight work is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def terminate(self) -> None:
        """SIGTERM: the service shuts down gracefully (see ``stop``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()

    def stop(self) -> None:
        self.terminate()
        if self.process is not None:
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_tail(self, characters: int = 4000) -> str:
        return (
            self.log_path.read_text(errors="replace")[-characters:]
            if self.log_path.exists()
            else ""
        )


@dataclass
class Recorder:
    """A durable pull consumer of the test that decodes and keeps every message it gets."""

    subject: str
    event_type: type[Message]
    events: list[Any] = field(default_factory=list)
    raw: list[Any] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    # Set at teardown. Cancelling the task alone is not enough: Python 3.11's asyncio.wait_for
    # (inside nats-py's fetch) can swallow a cancellation that lands as its timeout fires, and
    # the pull loop, which goes on after a timeout, then never ends (a teardown hung for 300 s).
    stopping: bool = False

    def of_job(self, job_id: str) -> list[Any]:
        return [event for event in self.events if event.job_id == job_id]

    async def wait_for_count(self, count: int, *, within: float = 20.0) -> list[Any]:
        await wait_for(
            lambda: len(self.events) >= count,
            within=within,
            what=f"{count} messages on {self.subject} (have {len(self.events)})",
        )
        return self.events


@dataclass
class LocusStack:
    root: Path
    nats_url: str
    ingestion: ServiceProcess
    ast: ServiceProcess
    ingestion_stub: Any
    ast_stub: Any
    nc: Any
    js: Any
    extra: list[ServiceProcess] = field(default_factory=list)
    recorders: list[Recorder] = field(default_factory=list)
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    @property
    def ast_database(self) -> Path:
        return Path(self.ast.env["LOCUS_AST_DATA_DIR"]) / "ast.db"

    def ast_tables(self, database: Path | None = None) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of the ast store's tables (this stack's ast, or another ast's store)."""
        return dump_ast_tables(database or self.ast_database)

    def ast_rows(self, sql: str, *parameters: object) -> list[tuple[Any, ...]]:
        """Rows of a query on the ast process's SQLite store (read-only)."""
        connection = sqlite3.connect(f"file:{self.ast_database}?mode=ro", uri=True)
        try:
            return connection.execute(sql, parameters).fetchall()
        finally:
            connection.close()

    # driving ingestion

    async def create_project(self, source: Path, name: str = "") -> str:
        project = await self.ingestion_stub.CreateProject(
            ingestion_pb2.CreateProjectRequest(name=name or f"demo-{uuid.uuid4().hex[:8]}")
        )
        await self.ingestion_stub.AddSource(
            ingestion_pb2.AddSourceRequest(project_id=project.project_id, path=str(source))
        )
        return str(project.project_id)

    async def scan(self, project_id: str, *, within: float = 30.0) -> Any:
        """Start a scan and wait until it is COMPLETED (or FAILED); returns the ScanJob."""
        job = await self.ingestion_stub.StartScan(
            ingestion_pb2.StartScanRequest(project_id=project_id)
        )
        return await self.wait_for_job(job.job_id, within=within)

    async def wait_for_job(self, job_id: str, *, within: float = 30.0) -> Any:
        deadline = time.monotonic() + within
        finished = (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED)
        while True:
            job = await self.ingestion_stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
            if job.state in finished:
                return job
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"scan {job_id} still {ingestion_pb2.ScanState.Name(job.state)} after "
                    f"{within:.0f}s: {job.stats}\n--- ast log ---\n{self.ast.log_tail()}"
                )
            await asyncio.sleep(0.05)

    # observing the bus

    async def record(
        self, subject: str, event_type: type[MessageT], *, stream: str = STREAM
    ) -> Recorder:
        """A durable consumer of the test (its own name) that reads ``subject`` from now on."""
        recorder = Recorder(subject, event_type)
        subscription = await self.js.pull_subscribe(
            subject,
            durable=f"test-{uuid.uuid4().hex[:10]}",
            stream=stream,
            config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW, ack_wait=30),
        )

        async def pull() -> None:
            while not recorder.stopping:
                try:
                    messages = await subscription.fetch(batch=256, timeout=0.2)
                except TimeoutError:  # nats-py raises its own subclass and asyncio's
                    continue
                for message in messages:
                    recorder.raw.append(message)
                    recorder.events.append(event_type.FromString(message.data))
                    await message.ack()

        recorder.task = asyncio.create_task(pull())
        self.recorders.append(recorder)
        return recorder

    async def publish_raw(
        self, subject: str, payload: bytes, *, message_id: str, stream: str = STREAM
    ) -> Any:
        return await self.js.publish(
            subject, payload, stream=stream, headers={"Nats-Msg-Id": message_id}
        )

    async def ast_ack_floor(self, consumer: str = "ast", stream: str = STREAM) -> int:
        info = await self.js.consumer_info(stream, consumer)
        return int(info.ack_floor.stream_seq)

    # the ast process

    async def restart_ast(self) -> None:
        self.ast.start()
        await self.ast.wait_serving()

    async def start_extra_ast(
        self, name: str, *, subject_prefix: str, stream: str
    ) -> ServiceProcess:
        """Another ast process with its own store, subjects and stream (a clean reference run
        fed by the test); its store is ``<root>/<name>/data/ast.db``."""
        env = dict(self.ast.env)
        data_dir = self.root / name / "data"
        data_dir.mkdir(parents=True)
        port = free_port()
        env.update(
            LOCUS_AST_DATA_DIR=str(data_dir),
            LOCUS_AST_GRPC_PORT=str(port),
            LOCUS_AST_SUBJECT_PREFIX=subject_prefix,
            LOCUS_AST_STREAM_NAME=stream,
        )
        process = ServiceProcess(name, "locus.ast", env, port, self.root / name)
        self.extra.append(process)
        process.start()
        await process.wait_serving()
        return process


def _clean_environment() -> dict[str, str]:
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("LOCUS_", "OTEL_"))
    }
    env["PYTHONUNBUFFERED"] = "1"
    env["OTEL_TRACES_EXPORTER"] = "none"
    return env


StackFactory = Callable[..., Awaitable[LocusStack]]


@pytest.fixture
async def start_stack(tmp_path: Path) -> AsyncIterator[StackFactory]:
    """Factory of the per-test stack; everything it starts is stopped at teardown."""
    started: list[tuple[EmbeddedNatsServer, LocusStack | None, list[ServiceProcess]]] = []

    async def start(
        *, ingestion_batch_size: int = 64, ast_env: dict[str, str] | None = None
    ) -> LocusStack:
        root = tmp_path / "stack"
        root.mkdir()
        nats_server = EmbeddedNatsServer(root / "nats")
        nats_server.start()
        processes: list[ServiceProcess] = []
        started.append((nats_server, None, processes))
        ingestion_port, ast_port = free_port(), free_port()
        base = _clean_environment() | {
            "LOCUS_NATS_URL": nats_server.url,
            "LOCUS_INGESTION_ADDR": f"127.0.0.1:{ingestion_port}",
            "LOCUS_AST_ADDR": f"127.0.0.1:{ast_port}",
            "LOCUS_LOG_LEVEL": "INFO",
        }
        ingestion_env = base | {
            "LOCUS_INGESTION_GRPC_PORT": str(ingestion_port),
            "LOCUS_INGESTION_DATA_DIR": str(root / "ingestion" / "data"),
            "LOCUS_INGESTION_ALLOWED_BASES": str(tmp_path),
            "LOCUS_INGESTION_REQUIRED_STAGES": "ast",
            "LOCUS_INGESTION_BATCH_SIZE": str(ingestion_batch_size),
            "LOCUS_INGESTION_SHUTDOWN_GRACE_SECONDS": "1",
        }
        ast_environment = (
            base
            | {
                "LOCUS_AST_GRPC_PORT": str(ast_port),
                "LOCUS_AST_DATA_DIR": str(root / "ast" / "data"),
                "LOCUS_AST_ACK_WAIT_SECONDS": "3",
                "LOCUS_AST_SHUTDOWN_GRACE_SECONDS": "1",
            }
            | (ast_env or {})
        )
        for name in ("ingestion", "ast"):
            (root / name).mkdir()
        ingestion = ServiceProcess(
            "ingestion", "locus.ingestion", ingestion_env, ingestion_port, root / "ingestion"
        )
        ast = ServiceProcess("ast", "locus.ast", ast_environment, ast_port, root / "ast")
        processes.extend((ingestion, ast))
        ingestion.start()
        ast.start()
        await asyncio.gather(ingestion.wait_serving(), ast.wait_serving())
        ingestion_channel = grpc.aio.insecure_channel(ingestion.address)
        ast_channel = grpc.aio.insecure_channel(ast.address)
        nc = await nats.connect(nats_server.url)
        stack = LocusStack(
            root=root,
            nats_url=nats_server.url,
            ingestion=ingestion,
            ast=ast,
            ingestion_stub=ingestion_pb2_grpc.IngestionServiceStub(ingestion_channel),
            ast_stub=ast_pb2_grpc.AstServiceStub(ast_channel),
            nc=nc,
            js=nc.jetstream(),
            channels=[ingestion_channel, ast_channel],
        )
        started[-1] = (nats_server, stack, processes)
        return stack

    yield start

    for nats_server, stack, processes in reversed(started):
        if stack is not None:
            for recorder in stack.recorders:
                recorder.stopping = True
                if recorder.task is not None:
                    recorder.task.cancel()
                    await asyncio.gather(recorder.task, return_exceptions=True)
            await stack.nc.close()
            for channel in stack.channels:
                await channel.close()
            processes.extend(stack.extra)
        for process in processes:  # all at once: each drains for up to its grace period
            process.terminate()
        for process in processes:
            process.stop()
        nats_server.stop()


@pytest.fixture
async def stack(start_stack: StackFactory) -> LocusStack:
    """nats-server + ingestion + ast with default settings."""
    return await start_stack()


@pytest.fixture
def source_tree(tmp_path: Path) -> Path:
    """The fixture repository: ``src/uploads/*.py``, ``README.md``, ``assets/logo.png``."""
    return write_fixture_tree(tmp_path / "repository")
