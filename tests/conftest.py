"""Fixtures shared by every test: a real nats-server, a real PostgreSQL, span capture, free
ports."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from required import unavailable
from sqlalchemy.engine import make_url
from stores import BACKENDS, database_url_for

from locus.messaging import EmbeddedNatsServer


@pytest.fixture
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNatsServer]:
    """A real nats-server with JetStream on a random loopback port, private to the test."""
    server = EmbeddedNatsServer(tmp_path_factory.mktemp("nats"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def span_exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_port() -> int:
    return free_port()


class OtlpSink:
    """A real OTLP/gRPC trace receiver on loopback: services export to it exactly as they would
    to an OpenTelemetry collector (OTEL_EXPORTER_OTLP_ENDPOINT)."""

    def __init__(self) -> None:
        import threading
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.trace.v1 import (
            trace_service_pb2,
            trace_service_pb2_grpc,
        )

        sink = self
        self.spans: list[dict[str, object]] = []
        self._lock = threading.Lock()

        class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):  # type: ignore[no-untyped-def]
                sink._collect(request)
                return trace_service_pb2.ExportTraceServiceResponse()

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }

    def _collect(self, request: object) -> None:
        for resource_spans in request.resource_spans:  # type: ignore[attr-defined]
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "?",
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: a.value.string_value for a in span.attributes}
                    with self._lock:
                        self.spans.append(
                            {
                                "service": service,
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_span_id": span.parent_span_id.hex(),
                                "kind": int(span.kind),
                                "attributes": attributes,
                            }
                        )

    def snapshot(self) -> list[dict[str, object]]:
        with self._lock:
            return list(self.spans)

    def edges(self, trace_id: str | None = None) -> set[tuple[str, str]]:
        """(parent service, child service) for every parent→child span pair that crosses
        services — the edges of a trace, as the OpenTelemetry demo's trace tests assert."""
        spans = [s for s in self.snapshot() if trace_id is None or s["trace_id"] == trace_id]
        by_id = {span["span_id"]: span for span in spans}
        found: set[tuple[str, str]] = set()
        for span in spans:
            parent = by_id.get(span["parent_span_id"])
            if parent is not None and parent["service"] != span["service"]:
                found.add((str(parent["service"]), str(span["service"])))
        return found

    def stop(self) -> None:
        self._server.stop(grace=None)


@pytest.fixture
def otlp_sink() -> Iterator[OtlpSink]:
    sink = OtlpSink()
    yield sink
    sink.stop()


@pytest.fixture(scope="module")
def module_otlp_sink() -> Iterator[OtlpSink]:
    """One OTLP receiver for every test of a module (for module-scoped stacks)."""
    sink = OtlpSink()
    yield sink
    sink.stop()


# --- PostgreSQL ----------------------------------------------------------------------------------
# ``LOCUS_TEST_PG_URL`` when set, otherwise a throwaway server started for the session from the
# PostgreSQL binaries on this machine (``LOCUS_TEST_PG_BIN``, Debian's /usr/lib/postgresql/*/bin
# or pg_ctl on PATH), run as the ``postgres`` user when the tests run as root (PostgreSQL refuses
# to run as root). Without either, tests that use it skip and say why. Mark them
# ``pytest.mark.postgres``.


@dataclass(frozen=True)
class PostgresServer:
    admin_url: str  # a PostgreSQL URL; its user may be allowed to CREATE DATABASE

    def url(self, *, database: str | None = None, driver: str = "postgresql") -> str:
        url = make_url(self.admin_url).set(drivername=driver)
        if database is not None:
            url = url.set(database=database)
        return url.render_as_string(hide_password=False)


def _postgres_bin_dir() -> Path | None:
    configured = os.environ.get("LOCUS_TEST_PG_BIN")
    if configured:
        return Path(configured)

    def version(path: Path) -> float:
        try:
            return float(path.parent.name)
        except ValueError:
            return 0.0

    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    for candidate in debian:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _as_unprivileged() -> tuple[list[str], int | None, int | None]:
    """PostgreSQL refuses to run as root: run its binaries as the postgres user then."""
    if os.geteuid() != 0:
        return [], None, None
    runuser = shutil.which("runuser")
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        account = None
    if runuser is None or account is None:
        raise RuntimeError("running as root without runuser or a 'postgres' user")
    return [runuser, "-u", "postgres", "--"], account.pw_uid, account.pw_gid


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (see above)."""
    configured = os.environ.get("LOCUS_TEST_PG_URL")
    if configured:
        yield PostgresServer(admin_url=configured)
        return
    bin_dir = _postgres_bin_dir()
    if bin_dir is None:
        unavailable(
            "PostgreSQL",
            "set LOCUS_TEST_PG_URL, or install PostgreSQL (Debian: postgresql-15) so "
            "initdb/pg_ctl are found",
        )
    try:
        prefix, uid, gid = _as_unprivileged()
    except RuntimeError as error:
        unavailable("PostgreSQL", f"cannot start it: {error}")
    base = Path(tempfile.mkdtemp(prefix="locus-pg-"))
    if uid is not None and gid is not None:
        os.chown(base, uid, gid)
    data = base / "data"
    port = free_port()

    def run(*command: str) -> None:
        result = subprocess.run(
            [*prefix, *command], capture_output=True, text=True, timeout=120, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {result.stderr or result.stdout}")

    try:
        run(
            str(bin_dir / "initdb"), "-D", str(data), "-U", "locus", "--auth=trust",
            "-E", "UTF8", "--locale=C.UTF-8",
        )  # fmt: skip
        run(
            str(bin_dir / "pg_ctl"),
            "-D", str(data),
            "-l", str(base / "postgres.log"),
            "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off",
            "-w", "-t", "60",
            "start",
        )  # fmt: skip
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        shutil.rmtree(base, ignore_errors=True)
        unavailable("PostgreSQL", f"could not start it from {bin_dir}: {error}")
    try:
        yield PostgresServer(admin_url=f"postgresql://locus@127.0.0.1:{port}/postgres")
    finally:
        subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
async def postgres_database_url(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """A ``postgresql+asyncpg://`` URL of a new, uniquely named database, dropped afterwards.

    When the server refuses CREATE DATABASE (a ``LOCUS_TEST_PG_URL`` user without CREATEDB), the
    URL of the server's own database instead: callers drop their tables around the test."""
    import asyncpg  # installed with locus-database

    admin = await asyncpg.connect(postgres_server.url())
    name = f"locus_test_{uuid.uuid4().hex[:12]}"
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    except asyncpg.PostgresError:
        await admin.close()
        yield postgres_server.url(driver="postgresql+asyncpg")
        return
    await admin.close()
    try:
        yield postgres_server.url(database=name, driver="postgresql+asyncpg")
    finally:
        admin = await asyncpg.connect(postgres_server.url())
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture(params=BACKENDS)
def store_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh database of each backend a store runs on (SQLite, PostgreSQL)."""
    return database_url_for(request, tmp_path)
