"""Git sources end to end on real git: a bare repository served over file://, a real
``git daemon`` on loopback and ``git http-backend`` behind basic auth; scans of a branch, a tag
and a commit id, incremental rescans after a push (NotifyPush and polling), clear errors for a
wrong URL, an unknown ref and bad credentials, and no token in any log line or reply."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import pytest

from locus.ingestion.main import build
from locus.ingestion.settings import IngestionSettings
from locus.messaging import EmbeddedNatsServer
from locus.rpc import make_channel
from locus.v1 import common_pb2, ingestion_pb2, ingestion_pb2_grpc

pytestmark = pytest.mark.integration

Stub = ingestion_pb2_grpc.IngestionServiceStub
TOKEN = "glpat-Sup3rSecretT0ken"
AUTHOR = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *AUTHOR, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


class Origin:
    """A bare repository (what servers serve) and a work tree that pushes to it."""

    def __init__(self, base: Path) -> None:
        self.bare = base / "origin.git"
        self.work = base.parent / "work"
        git(base, "init", "--bare", "--quiet", "--initial-branch=main", str(self.bare))
        git(base.parent, "init", "--quiet", "--initial-branch=main", str(self.work))
        git(self.work, "remote", "add", "origin", str(self.bare))

    def commit(self, files: dict[str, str], deleted: tuple[str, ...] = ()) -> str:
        for name, text in files.items():
            path = self.work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for name in deleted:
            (self.work / name).unlink()
        git(self.work, "add", "-A")
        git(self.work, "commit", "--quiet", "-m", f"change {sorted(files)} {deleted}")
        git(self.work, "push", "--quiet", "origin", "main")
        return git(self.work, "rev-parse", "HEAD")


@pytest.fixture
def origin(tmp_path: Path) -> Origin:
    base = tmp_path / "repos"
    base.mkdir()
    return Origin(base)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def git_daemon(origin: Origin) -> Iterator[str]:
    """``git daemon`` serving the origin's directory on a loopback port: its base URL."""
    port = _free_port()
    process = subprocess.Popen(
        [
            "git",
            "daemon",
            "--export-all",
            "--reuseaddr",
            "--informative-errors",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={origin.bare.parent}",
            str(origin.bare.parent),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process)
        yield f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


class _GitHttpHandler(BaseHTTPRequestHandler):
    """``git http-backend`` as a CGI behind HTTP basic auth (user ``ci``, password TOKEN)."""

    project_root = ""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        expected = "Basic " + base64.b64encode(f"ci:{TOKEN}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {
            "PATH": os.environ["PATH"],
            "GIT_PROJECT_ROOT": self.project_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "ci",
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        done = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def http_git(origin: Origin) -> Iterator[str]:
    """The origin over smart HTTP behind basic auth: its base URL."""
    handler = type("Handler", (_GitHttpHandler,), {"project_root": str(origin.bare.parent)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@asynccontextmanager
async def serving(
    nats_server: EmbeddedNatsServer, tmp_path: Path, **settings: Any
) -> AsyncIterator[Stub]:
    runtime = build(
        IngestionSettings(
            nats_url=nats_server.url,
            grpc_port=0,
            data_dir=tmp_path / "data",
            allowed_bases=[tmp_path / "repos"],
            required_stages=[],
            git_allow_http=True,
            credential_bases=[tmp_path / "credentials"],
            min_poll_seconds=0.2,
            git_timeout_seconds=30,
            **settings,
        )
    )
    await runtime.start()
    try:
        async with make_channel(runtime.address, None) as channel:
            yield Stub(channel)
    finally:
        await runtime.stop()


@pytest.fixture
async def api(
    nats_server: EmbeddedNatsServer, tmp_path: Path, origin: Origin
) -> AsyncIterator[Stub]:
    async with serving(nats_server, tmp_path) as stub:
        await stub.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))
        yield stub


async def code_of(call: object) -> tuple[grpc.StatusCode, str]:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    raise AssertionError("the call succeeded")


async def wait_done(stub: Stub, job_id: str) -> ingestion_pb2.ScanJob:
    for _ in range(400):
        job = await stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
        if job.state in (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED):
            assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
            return job
        await asyncio.sleep(0.05)
    raise AssertionError("scan did not finish")


async def scan(stub: Stub, project: str = "p") -> ingestion_pb2.ScanJob:
    job = await stub.StartScan(ingestion_pb2.StartScanRequest(project_id=project))
    return await wait_done(stub, job.job_id)


async def files_of(stub: Stub, project: str = "p") -> dict[str, str]:
    listed = await stub.ListFiles(
        ingestion_pb2.ListFilesRequest(
            project_id=project, page=common_pb2.PageRequest(page_size=100)
        )
    )
    return {f.relative_path: f.sha256 for f in listed.files}


def counts(job: ingestion_pb2.ScanJob) -> tuple[int, int, int, int]:
    s = job.stats
    return (s.files_added, s.files_modified, s.files_deleted, s.files_unchanged)


FIRST = {"a.py": "def a():\n    return 1\n", "b.py": "B = 2\n", "c.py": "C = 3\n"}


async def test_a_branch_over_file_url_rescans_incrementally_after_a_push(
    api: Stub, origin: Origin
) -> None:
    first_sha = origin.commit(FIRST)
    source = await api.AddSource(
        ingestion_pb2.AddSourceRequest(
            project_id="p", git_url=f"file://{origin.bare}", git_ref="main"
        )
    )
    assert source.kind == ingestion_pb2.SOURCE_KIND_GIT
    assert source.path == ""
    first = await scan(api)
    assert counts(first) == (3, 0, 0, 0)
    assert [(c.source_id, c.git_ref, c.commit_sha) for c in first.commits] == [
        (source.source_id, "main", first_sha)
    ]
    before = await files_of(api)
    content = await api.GetFileContent(ingestion_pb2.GetFileContentRequest(sha256=before["a.py"]))
    assert content.text == FIRST["a.py"]

    second_sha = origin.commit({"a.py": "def a():\n    return 2\n"}, deleted=("b.py",))
    pushed = await api.NotifyPush(
        ingestion_pb2.NotifyPushRequest(
            project_id="p", source_id=source.source_id, commit_sha=second_sha
        )
    )
    assert pushed.scan_started
    second = await wait_done(api, pushed.job.job_id)
    assert counts(second) == (0, 1, 1, 1)
    assert [c.commit_sha for c in second.commits] == [second_sha]
    after = await files_of(api)
    assert sorted(after) == ["a.py", "c.py"]
    assert after["c.py"] == before["c.py"]
    assert after["a.py"] != before["a.py"]
    (listed,) = (await api.ListSources(ingestion_pb2.ListSourcesRequest(project_id="p"))).sources
    assert listed.last_commit_sha == second_sha
    # The mirror keeps the history of the scanned commit: the change history the learned
    # ranker reads is a git source's as it is a work tree's.
    history = await api.ScoreFileHistory(
        ingestion_pb2.ScoreFileHistoryRequest(
            project_id="p", question="change a.py", relative_paths=["a.py", "c.py", "b.py"]
        )
    )
    assert history.commits_read == 2
    assert [(f.relative_path, f.commits, f.last_change) for f in history.files] == [
        ("a.py", 2, 0),
        ("c.py", 1, 1),
        ("b.py", 2, 0),
    ]

    again = await api.NotifyPush(
        ingestion_pb2.NotifyPushRequest(
            project_id="p", source_id=source.source_id, commit_sha=second_sha[:10]
        )
    )
    assert (again.scan_started, "scanned already" in again.reason) == (False, True)
    unchanged = await scan(api)
    assert counts(unchanged) == (0, 0, 0, 2)


async def test_git_daemon_tags_commit_ids_and_polling(
    api: Stub, origin: Origin, git_daemon: str
) -> None:
    first_sha = origin.commit(FIRST)
    git(origin.work, "tag", "-a", "v1", "-m", "release 1")
    git(origin.work, "push", "--quiet", "origin", "v1")
    url = f"{git_daemon}/origin.git"
    for name, ref in (("tagged", "v1"), ("pinned", first_sha), ("short", first_sha[:8])):
        await api.CreateProject(ingestion_pb2.CreateProjectRequest(name=name))
        await api.AddSource(
            ingestion_pb2.AddSourceRequest(project_id=name, git_url=url, git_ref=ref)
        )
    origin.commit({"d.py": "D = 4\n"})  # the branch moves on; the tag and the ids do not
    for name in ("tagged", "pinned", "short"):
        job = await scan(api, name)
        assert (counts(job), job.commits[0].commit_sha) == ((3, 0, 0, 0), first_sha), name

    source = await api.AddSource(
        ingestion_pb2.AddSourceRequest(project_id="p", git_url=url, git_ref="main", poll_seconds=1)
    )
    assert source.poll_seconds == 1
    await scan(api)
    assert sorted(await files_of(api)) == ["a.py", "b.py", "c.py", "d.py"]
    moved = origin.commit({"c.py": "C = 30\n"}, deleted=("d.py",))
    for _ in range(200):  # the poller sees the branch move and scans it
        (listed,) = (
            await api.ListSources(ingestion_pb2.ListSourcesRequest(project_id="p"))
        ).sources
        if listed.last_commit_sha == moved and sorted(await files_of(api)) == [
            "a.py",
            "b.py",
            "c.py",
        ]:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("polling did not rescan the moved branch")


@pytest.fixture
def service_log() -> Iterator[list[str]]:
    """Every log record of the process, formatted with its arguments and traceback."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect(level=logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


async def test_wrong_urls_unknown_refs_and_bad_credentials_fail_clearly_without_the_token(
    nats_server: EmbeddedNatsServer,
    tmp_path: Path,
    origin: Origin,
    http_git: str,
    service_log: list[str],
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    origin.commit(FIRST)
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    good = credentials / "good"
    good.write_text(f"ci:{TOKEN}\n")
    bad = credentials / "bad"
    bad.write_text("ci:not-the-token\n")
    outside = tmp_path / "token"
    outside.write_text(TOKEN)
    monkeypatch.setenv("LOCUS_GIT_TOKEN_CI", f"ci:{TOKEN}")
    url = f"{http_git}/origin.git"
    async with serving(nats_server, tmp_path) as api:
        await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="p"))

        async def refused(**fields: Any) -> tuple[grpc.StatusCode, str]:
            request = ingestion_pb2.AddSourceRequest(project_id="p", **fields)
            return await code_of(api.AddSource(request))

        code, message = await refused(git_url=url, git_ref="main")
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "credentials" in message
        code, message = await refused(git_url=url, git_ref="main", credential_file=str(bad))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "refused the credentials" in message
        code, message = await refused(git_url=url, git_ref="nope", credential_file=str(good))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "'nope'" in message
        assert "main" in message  # the branches it does have
        code, message = await refused(
            git_url=f"file://{tmp_path / 'repos'}", git_ref="main"
        )  # a directory, not a repository
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "names a repository" in message
        code, message = await refused(git_url=f"git://127.0.0.1:{_free_port()}/x.git")
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "reachable" in message
        code, message = await refused(git_url="file:///etc", git_ref="main")
        assert code == grpc.StatusCode.PERMISSION_DENIED
        code, message = await refused(git_url=url, credential_file=str(outside))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "credential directories" in message
        code, message = await refused(git_url=url, credential_env="LOCUS_SERVICE_TOKEN")
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "LOCUS_GIT_TOKEN" in message
        code, message = await refused(git_url=url, credential_env="LOCUS_GIT_TOKEN_UNSET")
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "not set" in message

        by_file = await api.AddSource(
            ingestion_pb2.AddSourceRequest(
                project_id="p", git_url=url, git_ref="main", credential_file=str(good)
            )
        )
        assert by_file.credential_file == str(good.resolve())
        await api.CreateProject(ingestion_pb2.CreateProjectRequest(name="q"))
        await api.AddSource(
            ingestion_pb2.AddSourceRequest(
                project_id="q", git_url=url, git_ref="main", credential_env="LOCUS_GIT_TOKEN_CI"
            )
        )
        assert counts(await scan(api, "p")) == (3, 0, 0, 0)
        assert counts(await scan(api, "q")) == (3, 0, 0, 0)

        good.write_text("ci:revoked\n")  # the token was rotated on the server side
        origin.commit({"e.py": "E = 5\n"})
        started = await api.StartScan(ingestion_pb2.StartScanRequest(project_id="p"))
        for _ in range(200):
            job = await api.GetScan(ingestion_pb2.GetScanRequest(job_id=started.job_id))
            if job.state == ingestion_pb2.SCAN_STATE_FAILED:
                break
            await asyncio.sleep(0.05)
        assert "refused the credentials" in job.error
        sources = await api.ListSources(ingestion_pb2.ListSourcesRequest(project_id="p"))
        assert TOKEN not in str(sources)

    captured = capfd.readouterr()
    assert service_log, "the service logged nothing: the capture is broken"
    for where, text in (
        ("log records", "\n".join(service_log)),
        ("stdout/stderr", captured.out + captured.err),
        ("database", (tmp_path / "data" / "ingestion.db").read_bytes().decode("latin-1")),
    ):
        assert TOKEN not in text, where
    for path in (tmp_path / "data" / "git").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
