"""The real `locus` console script against a real `locus up`: nats-server and the services as
separate processes on a temporary data dir, a small fixture repository in the only allowed base.
Commands run as subprocesses; the last test stops the stack with SIGINT and checks that every
process it started is gone and its state file removed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import nats
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.errors import Error as NatsError
from required import unavailable

from locus.rpc import SERVICE_TOKEN_HEADER
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

REPOSITORY = Path(__file__).resolve().parents[3]
FIXTURE_PACKAGE = REPOSITORY / "tests" / "unit" / "ast" / "fixtures" / "uploads"
LOCUS = Path(sys.executable).parent / "locus"
# The services this test starts; the CLI goes through the gateway when it is among them.
SERVICES = os.environ.get("LOCUS_TEST_CLI_SERVICES", "ingestion,ast")
STARTUP_SECONDS = 60.0


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    data_dir: Path
    home: Path
    allowed_base: Path
    repository: Path
    environment: dict[str, str]
    workdir: Path
    output: Path

    @property
    def state_file(self) -> Path:
        return self.data_dir / "stack.json"

    def locus(self, *arguments: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LOCUS), *arguments],
            env=self.environment,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def locus_json(self, *arguments: str) -> Any:
        result = self.locus(*arguments, "--json")
        assert result.returncode == 0, result.stdout + result.stderr
        return json.loads(result.stdout)


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (from /proc)."""
    parents = {
        int(p.name): _parent_of(int(p.name)) for p in Path("/proc").iterdir() if p.name.isdigit()
    }
    found: set[int] = set()
    frontier = {root}
    while frontier:
        children = {pid for pid, parent in parents.items() if parent in frontier}
        frontier = children - found
        found |= children
    return found


def is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if not LOCUS.exists():
        unavailable("the locus CLI", f"{LOCUS} is missing: pip install -e libs/cli")
    root = tmp_path_factory.mktemp("locus-cli")
    allowed_base = root / "allowed"
    repository = allowed_base / "repo"
    shutil.copytree(FIXTURE_PACKAGE, repository / "uploads")
    (root / "outside").mkdir()
    workdir = root / "work"
    workdir.mkdir()
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("LOCUS_GATEWAY_ADDR", "LOCUS_TRACES_FILE")
    }
    environment["LOCUS_HOME"] = str(root / "home")
    output = root / "up.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(LOCUS), "up",
                "--data-dir", str(root / "data"),
                "--allow-base", str(allowed_base),
                "--services", SERVICES,
            ],
            env=environment,
            cwd=workdir,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    started = Stack(
        process,
        root / "data",
        root / "home",
        allowed_base,
        repository,
        environment,
        workdir,
        output,
    )
    deadline = time.monotonic() + STARTUP_SECONDS
    while not started.state_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"locus up did not start:\n{output.read_text()}")
        time.sleep(0.1)
    yield started
    if process.poll() is None:  # the SIGINT test did not run or failed: do not leak processes
        leftovers = descendants(process.pid)
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        for pid in leftovers:
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)


def test_up_reports_where_everything_runs(stack: Stack) -> None:
    state = json.loads(stack.state_file.read_text())
    assert state["supervisor_pid"] == stack.process.pid
    assert set(SERVICES.split(",")) <= set(state["services"])
    assert state["ingestion_addr"] == state["services"]["ingestion"]["address"]
    for service in state["services"].values():
        assert Path(service["log_file"]).parent == stack.data_dir / "logs"
    pointer = json.loads((stack.home / "current-stack.json").read_text())
    assert pointer["state_file"] == str(stack.state_file)
    # The state file is written just before the table is printed: wait for the output.
    deadline = time.monotonic() + 15
    text = stack.output.read_text()
    while "ready" not in text and time.monotonic() < deadline:
        time.sleep(0.1)
        text = stack.output.read_text()
    assert "ingestion" in text
    assert "ready" in text

    status = stack.locus_json("status")
    assert status["healthy"] is True
    assert {row["name"]: row["health"] for row in status["services"]}["ingestion"] == "SERVING"


def test_create_add_scan_and_find_symbols(stack: Stack) -> None:
    project = stack.locus_json("project", "create", "uploads-demo", "--system", "storage")
    assert project["name"] == "uploads-demo"
    assert project["system"] == "storage"

    source = stack.locus_json("source", "add", "uploads-demo", str(stack.repository))
    assert source["path"] == str(stack.repository.resolve())
    listed = stack.locus_json("source", "list", "uploads-demo")
    assert [s["source_id"] for s in listed["sources"]] == [source["source_id"]]

    job = stack.locus_json("scan", "uploads-demo", "--wait")
    assert job["state"] == "completed", job
    assert job["stats"]["files_added"] == 4
    assert job["stats"]["files_indexed"] == 4
    assert job["files_per_second"] > 0

    found = stack.locus_json("symbols", "uploads-demo", "retry")
    by_name = {s["qualified_name"]: s for s in found["symbols"]}
    limit = by_name["uploads.policy.enforce_retry_limit"]
    assert (limit["kind"], limit["path"], limit["start_line"], limit["end_line"]) == (
        "function",
        "uploads/policy.py",
        7,
        12,
    )
    assert limit["location"] == "uploads/policy.py:7-12"
    assert by_name["uploads.client.UploadClient._retry"]["start_line"] == 53

    classes = stack.locus_json("symbols", "uploads-demo", "Upload", "--kind", "class")
    assert {s["name"] for s in classes["symbols"]} >= {"UploadClient", "UploadError"}
    assert {s["kind"] for s in classes["symbols"]} == {"class"}

    projects = stack.locus_json("project", "list")
    mine = next(p for p in projects["projects"] if p["name"] == "uploads-demo")
    assert mine["project_id"] == project["project_id"]
    assert mine["latest_snapshot_id"] == job["snapshot_id"]

    text = stack.locus("symbols", "uploads-demo", "enforce_retry_limit")
    assert text.returncode == 0, text.stderr
    assert "uploads/policy.py:7-12" in text.stdout

    # Nothing found in a scanned project does not ask whether it is scanned.
    missing = stack.locus("symbols", "uploads-demo", "no_such_name_anywhere")
    assert missing.returncode == 0, missing.stderr
    assert "which is scanned" in missing.stdout
    assert "locus scan" not in missing.stdout

    # --exact takes a qualified name's end after a separator, as `locus impact` does.
    exact = stack.locus_json("symbols", "uploads-demo", "UploadClient._retry", "--exact")
    assert [s["qualified_name"] for s in exact["symbols"]] == ["uploads.client.UploadClient._retry"]
    assert stack.locus_json("symbols", "uploads-demo", "Client._retry", "--exact")["symbols"] == []


def _git(repository: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-C", str(repository), *arguments], check=True, capture_output=True, timeout=30
    )


def test_source_notify_scans_a_pushed_git_source_and_says_why_not_otherwise(
    stack: Stack,
) -> None:
    """`locus source notify` is NotifyPush from the command line: a push that moved the ref
    starts a scan of what changed; a second notification finds nothing new and says so; a
    directory source is refused with the server's message."""
    upstream = stack.allowed_base / "pushed"
    shutil.copytree(FIXTURE_PACKAGE, upstream / "uploads")
    _git(upstream, "init", "-q", "-b", "main")
    _git(upstream, "add", ".")
    _git(upstream, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "first")
    stack.locus_json("project", "create", "pushed-demo")
    source = stack.locus_json("source", "add", "pushed-demo", f"file://{upstream}", "--ref", "main")
    first = stack.locus_json("scan", "pushed-demo", "--wait")
    assert first["state"] == "completed", first

    policy = upstream / "uploads" / "policy.py"
    policy.write_text(policy.read_text() + "\n\ndef pushed_helper():\n    return 1\n")
    _git(upstream, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "second")
    pushed = stack.locus_json("source", "notify", "pushed-demo", source["source_id"], "--wait")
    assert pushed["scan_started"] is True, pushed
    assert pushed["job"]["state"] == "completed", pushed
    assert pushed["job"]["stats"]["files_modified"] == 1
    found = stack.locus_json("symbols", "pushed-demo", "pushed_helper")
    assert [s["path"] for s in found["symbols"]] == ["uploads/policy.py"]

    again = stack.locus_json("source", "notify", "pushed-demo", source["source_id"])
    assert again["scan_started"] is False
    assert again["reason"]
    text = stack.locus("source", "notify", "pushed-demo", source["source_id"])
    assert text.returncode == 0, text.stderr
    assert "no scan started: " in text.stdout

    stack.locus_json("project", "create", "directory-demo")
    directory = stack.locus_json("source", "add", "directory-demo", str(stack.repository))
    refused = stack.locus("source", "notify", "directory-demo", directory["source_id"])
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "INVALID_ARGUMENT: " in refused.stderr
    assert "not a git source" in refused.stderr


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        (("source", "list", "no-such-project"), "NOT_FOUND", "no project 'no-such-project'"),
        (("scan", "no-such-project", "--wait"), "NOT_FOUND", "no project"),
        (("project", "create", "has spaces"), "INVALID_ARGUMENT", "may contain only letters"),
    ],
)
def test_bad_input_exits_2_with_the_servers_message(
    stack: Stack, arguments: tuple[str, ...], status: str, message: str
) -> None:
    result = stack.locus(*arguments)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{status}: " in result.stderr
    assert message in result.stderr
    assert "request id: " in result.stderr
    assert "Traceback" not in result.stderr


def test_a_source_outside_the_allowed_base_is_refused(stack: Stack) -> None:
    stack.locus("project", "create", "refused-demo")
    outside = stack.allowed_base.parent / "outside"
    result = stack.locus("source", "add", "refused-demo", str(outside))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "PERMISSION_DENIED: " in result.stderr
    assert "outside the allowed source bases" in result.stderr


def test_the_stack_keeps_its_internal_hops_closed(stack: Stack) -> None:
    """The same checks as a deployment: the service token and the NATS password are made in
    private files, every internal call without the token is refused, the bus refuses anonymous
    clients, and no service's log holds either secret."""
    state = json.loads(stack.state_file.read_text())
    secrets = {}
    for name in ("service_token_file", "nats_password_file"):
        path = Path(state[name])
        assert path.parent == stack.data_dir.resolve()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        secrets[name] = path.read_text().strip()
    assert state["nats_user"] == "locus"
    if "gateway" in state["services"]:
        assert state["admin_key_file"] == str(stack.data_dir.resolve() / "admin.key")
    address = state["services"]["ingestion"]["address"]
    with grpc.insecure_channel(address) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListProjects(ingestion_pb2.ListProjectsRequest(), timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        token = ((SERVICE_TOKEN_HEADER, secrets["service_token_file"]),)
        stub.ListProjects(ingestion_pb2.ListProjectsRequest(), timeout=10, metadata=token)
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING

    async def connect_anonymously() -> None:
        await nats.connect(
            state["nats"]["address"], allow_reconnect=False, max_reconnect_attempts=1
        )

    with pytest.raises(NatsError, match="Authorization Violation"):
        asyncio.run(connect_anonymously())
    for service in state["services"].values():
        log = Path(service["log_file"]).read_text(errors="replace")
        assert all(secret not in log for secret in secrets.values())


def test_sigint_stops_every_process_and_removes_the_state(stack: Stack) -> None:
    state = json.loads(stack.state_file.read_text())
    started = descendants(stack.process.pid)
    recorded = {state["nats"]["pid"], *(s["pid"] for s in state["services"].values())}
    assert recorded <= started

    stack.process.send_signal(signal.SIGINT)
    assert stack.process.wait(timeout=45) == 0, stack.output.read_text()

    still_running = sorted(pid for pid in started if is_running(pid))
    assert still_running == [], stack.output.read_text()
    assert not stack.state_file.exists()
    assert not (stack.home / "current-stack.json").exists()
    text = stack.output.read_text()
    stop_order = [*reversed(list(state["services"])), "nats-server"]
    order = [text.index(f"stopped {name} ") for name in stop_order]
    assert order == sorted(order)  # reverse start order, nats-server last

    after = stack.locus("project", "list")
    assert after.returncode == 3
    assert "locus up" in after.stderr
