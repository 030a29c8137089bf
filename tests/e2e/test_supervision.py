"""`locus up` supervises its services: `kill -9` of ast and of retrieval in the middle of a scan
is followed by their restart (counted in `locus status`), the scan completes, and the project's
indexes — files, symbols, dependencies, lexical hits, whole-file hits, graph edges
(tests/support/index_snapshot.py) — are identical to those of a clean scan of the same tree.
Also: killing `locus up` itself (SIGKILL) takes its services down, and a restarted service's log
keeps the crashed run's lines."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from index_snapshot import differences, index_snapshot
from locus_up import run_locus, start_locus_up, stop_locus_up
from mesh_access import admin_key_of, gateway_channel, service_token_of

from locus.v1 import gateway_pb2_grpc, ingestion_pb2

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

REPOSITORY = Path(__file__).resolve().parents[2]
SCORE_TOLERANCE = 0.05  # relative, on BM25 scores (see the comparison below)


@dataclass
class Up:
    process: subprocess.Popen[bytes]
    environment: dict[str, str]
    data_dir: Path
    tree: Path


def state(up: Up) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((up.data_dir / "stack.json").read_text())
    return data


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    root = tmp_path_factory.mktemp("supervision")
    tree = root / "allowed" / "locus"
    # A real tree big enough that a scan is still running when the kills land: this
    # repository's code and tests (not copies of it: the same qualified names in several files
    # resolve by what each file sees when it is committed, which a crash reorders).
    for part in ("libs", "services", "tests", "bench"):
        shutil.copytree(
            REPOSITORY / part,
            tree / part,
            ignore=shutil.ignore_patterns(
                "*_pb2*", "__pycache__", "*.egg-info", "fixtures", "candidates"
            ),
        )
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {
        "LOCUS_HOME": str(root / "home"),
        "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false",
    }
    process = start_locus_up(root, root / "allowed", environment)
    yield Up(process, environment, root / "data", tree)
    stop_locus_up(process)


def wait_for(up: Up, job_id: str, within_seconds: float = 600) -> Any:
    deadline = time.monotonic() + within_seconds
    with gateway_channel(state(up)["gateway_addr"], state(up)) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        while True:
            job = stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id), timeout=30)
            if job.state in (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED):
                return job
            assert time.monotonic() < deadline, f"scan {job_id} not finished: {job}"
            time.sleep(0.5)


def test_killed_services_restart_and_the_scan_ends_with_a_clean_runs_index(up: Up) -> None:
    env = up.environment
    for project in ("clean", "chaos"):
        assert run_locus(env, "project", "create", project).returncode == 0
        added = run_locus(env, "source", "add", project, str(up.tree))
        assert added.returncode == 0, added.stderr
    clean = run_locus(env, "scan", "clean", "--wait", "--json")
    assert clean.returncode == 0, clean.stderr

    started = run_locus(env, "scan", "chaos", "--json")
    assert started.returncode == 0, started.stderr
    job_id = json.loads(started.stdout)["job_id"]
    killed = {}
    for name in ("ast", "retrieval"):
        time.sleep(0.5)
        with gateway_channel(state(up)["gateway_addr"], state(up)) as channel:
            job = gateway_pb2_grpc.GatewayStub(channel).GetScan(
                ingestion_pb2.GetScanRequest(job_id=job_id), timeout=30
            )
        assert job.state not in (
            ingestion_pb2.SCAN_STATE_COMPLETED,
            ingestion_pb2.SCAN_STATE_FAILED,
        ), f"the scan ended before {name} was killed: the tree is too small for this test"
        pid = state(up)["services"][name]["pid"]
        os.kill(pid, signal.SIGKILL)
        killed[name] = pid
        deadline = time.monotonic() + 120
        while state(up)["services"][name]["pid"] == pid:
            assert time.monotonic() < deadline, f"{name} was not restarted"
            assert up.process.poll() is None, "locus up stopped instead of restarting"
            time.sleep(0.5)

    chaos_job = wait_for(up, job_id)
    assert chaos_job.state == ingestion_pb2.SCAN_STATE_COMPLETED, chaos_job.error
    clean_job = wait_for(up, json.loads(clean.stdout)["job_id"])
    for figure in ("files_seen", "files_added", "files_indexed", "files_skipped"):
        assert getattr(chaos_job.stats, figure) == getattr(clean_job.stats, figure), figure

    status = json.loads(run_locus(env, "status", "--json").stdout)
    restarts = {row["name"]: row["restarts"] for row in status["services"]}
    assert restarts["ast"] == 1
    assert restarts["retrieval"] == 1
    assert all(row["health"] in ("SERVING", "RUNNING") for row in status["services"])
    # The crashed run's lines are still in the log, followed by the restarted one's.
    ast_log = Path(state(up)["services"]["ast"]["log_file"]).read_text(errors="replace")
    assert ast_log.count("locus up started this process") == 2

    addresses = {name: row["address"] for name, row in state(up)["services"].items()}
    token, key = service_token_of(state(up)), admin_key_of(state(up))
    chaos = index_snapshot(addresses, "chaos", service_token=token, api_key=key)
    clean_index = index_snapshot(addresses, "clean", service_token=token, api_key=key)
    # Scores within 5%: the chaos project's statistics still count the deleted copies of the
    # documents the crashes made retrieval write twice (index_snapshot.differences).
    compared = differences(chaos, clean_index, score_tolerance=SCORE_TOLERANCE)
    differing = {index: account for index, account in compared.items() if account}
    assert differing == {}, f"after the crashes (first) vs the clean run (second): {differing}"


def test_killing_locus_up_takes_its_services_down(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment["LOCUS_HOME"] = str(tmp_path / "home")
    (tmp_path / "allowed").mkdir()
    process = start_locus_up(tmp_path, tmp_path / "allowed", environment)
    services = json.loads((tmp_path / "data" / "stack.json").read_text())["services"]
    pids = [running["pid"] for running in services.values()]
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + 60
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = [pid for pid in pids if _alive(pid)]
    assert alive == [], "services outlived a SIGKILLed locus up"


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status
