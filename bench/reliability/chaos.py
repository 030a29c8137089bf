"""Chaos under `locus up` (`make reliability`, part "chaos"): one stack, a clean scan of a real
tree, then for each of ingestion, ast, retrieval, impact and nats-server a scan of the same tree
as its own project with that process `kill -9`ed mid-scan. A killed service is restarted by
`locus up` (counted in stack.json); nats-server's death stops the whole stack, so for it `locus up`
is started again on the same data dir and the project rescanned. Each project's indexes are then
compared with the clean project's (tests/support/index_snapshot.py, the comparison the
supervision e2e test makes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))

from index_snapshot import Snapshot, differences, index_snapshot
from mesh_access import admin_key_of, service_token_of
from stack_process import BenchStack

from locus.rpc.bearer import with_bearer
from locus.v1 import events_pb2, gateway_pb2_grpc, ingestion_pb2

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("ingestion", "ast", "retrieval", "impact", "nats-server")
MODEL_DIR = REPO_ROOT / ".locus" / "models" / "all-minilm-l6-v2"
DONE = (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED)
WALKING = (ingestion_pb2.SCAN_STATE_QUEUED, ingestion_pb2.SCAN_STATE_SCANNING)
LEFT_OUT = ("bench/ranker/candidates/",)  # gzipped training dumps: bulk, no code
POLL_SECONDS = 0.05
# What the clean project must keep exactly across a restart of the stack.
STABLE_INDEXES = ("files", "symbols", "dependencies", "graph edges")
# Relative, on scores: a crashed project's statistics count the deleted copies of the documents
# it wrote twice until their segments merge (index_snapshot.differences).
SCORE_TOLERANCE = 0.05


@dataclass
class ChaosRun:
    target: str
    killed_at: str
    restarts: str
    completed: str
    seconds: float
    differences: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def copy_repository(repository: Path, destination: Path) -> int:
    """The files git tracks in ``repository`` (less LEFT_OUT) copied to ``destination``; or the
    whole directory (less __pycache__) when it is not the top of a git work tree. The number of
    files copied."""
    top = subprocess.run(
        ["git", "-C", str(repository), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != repository.resolve():
        ignored = shutil.ignore_patterns(".git", "__pycache__")
        shutil.copytree(repository, destination, ignore=ignored, symlinks=True)
        return sum(1 for path in destination.rglob("*") if path.is_file())
    listed = subprocess.run(
        ["git", "-C", str(repository), "ls-files", "-z"], capture_output=True, check=True
    )
    copied = 0
    for name in listed.stdout.decode().split("\0"):
        source = repository / name
        if not name or name.startswith(LEFT_OUT) or not source.is_file():
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        copied += 1
    return copied


def changed_file_count(job: ingestion_pb2.ScanJob) -> int:
    stats = job.stats
    return int(stats.files_added + stats.files_modified + stats.files_deleted)


def progress(job: ingestion_pb2.ScanJob) -> str:
    stats = job.stats
    changed = stats.files_added + stats.files_modified + stats.files_deleted
    state = ingestion_pb2.ScanState.Name(job.state).removeprefix("SCAN_STATE_").lower()
    if job.state in WALKING:
        return f"{state}, {stats.files_seen} files seen"
    return (
        f"{state}, {stats.files_parsed}/{changed} parsed, "
        f"{stats.files_indexed}/{changed} searchable"
    )


def kill_point_reached(target: str, job: ingestion_pb2.ScanJob, fraction: float) -> bool:
    """ingestion: during its walk when a poll catches it; everything: once ``fraction`` of the
    changed files are parsed (the parsers, indexers and graph are all busy by then)."""
    stats = job.stats
    if target == "ingestion" and job.state == ingestion_pb2.SCAN_STATE_SCANNING:
        return stats.files_seen > 0
    changed = stats.files_added + stats.files_modified + stats.files_deleted
    return (
        job.state == ingestion_pb2.SCAN_STATE_INDEXING
        and changed > 0
        and stats.files_parsed >= fraction * changed
    )


class ChaosStack:
    """One `locus up` on a private data dir, and the calls the chaos runs make to it."""

    def __init__(self, work: Path, *, vectors: bool, ack_wait: float | None = None) -> None:
        self.data_dir = work / "data"
        self.vectors = vectors
        (work / "allowed").mkdir(parents=True, exist_ok=True)
        environment = {} if vectors else {"LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false"}
        if ack_wait is not None:  # how long JetStream waits before redelivering unacked work
            for consumer in ("INGESTION", "AST", "RETRIEVAL", "IMPACT"):
                environment[f"LOCUS_{consumer}_ACK_WAIT_SECONDS"] = str(ack_wait)
        self.stack = BenchStack(
            data_dir=self.data_dir,
            allowed_bases=[work / "allowed"],
            locus_home=work / "home",
            model_dir=MODEL_DIR,
            console_log=work / "up.log",
            environment=environment,
        )
        self.api_key = ""  # the stack's admin key, read at each start

    def start(self) -> float:
        state, seconds = self.stack.start()
        self.api_key = admin_key_of(state)
        return seconds

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.data_dir / "stack.json").read_text())
        return data

    def addresses(self) -> dict[str, str]:
        return {name: row["address"] for name, row in self.state()["services"].items()}

    def pid_of(self, target: str) -> int:
        state = self.state()
        row = state["nats"] if target == "nats-server" else state["services"][target]
        return int(row["pid"])

    def restarts(self) -> dict[str, int]:
        return {name: int(row["restarts"]) for name, row in self.state()["services"].items()}

    def gateway(self) -> tuple[grpc.Channel, gateway_pb2_grpc.GatewayStub]:
        """A channel to the gateway whose calls carry the stack's admin key."""
        channel = with_bearer(grpc.insecure_channel(self.state()["gateway_addr"]), self.api_key)
        return channel, gateway_pb2_grpc.GatewayStub(channel)

    def add_project(self, name: str, tree: Path) -> None:
        channel, gateway = self.gateway()
        with channel:
            gateway.CreateProject(ingestion_pb2.CreateProjectRequest(name=name), timeout=30)
            gateway.AddSource(
                ingestion_pb2.AddSourceRequest(project_id=name, path=str(tree)), timeout=30
            )

    def start_scan(self, project: str) -> str:
        channel, gateway = self.gateway()
        with channel:
            job = gateway.StartScan(ingestion_pb2.StartScanRequest(project_id=project), timeout=30)
        return str(job.job_id)

    def job(self, job_id: str) -> ingestion_pb2.ScanJob | None:
        """The job, or None while the stack cannot answer (a service is restarting)."""
        try:
            channel, gateway = self.gateway()
            with channel:
                job: ingestion_pb2.ScanJob = gateway.GetScan(
                    ingestion_pb2.GetScanRequest(job_id=job_id), timeout=10
                )
        except (grpc.RpcError, OSError, ValueError):
            return None
        return job

    def wait_done(self, job_id: str, timeout_seconds: float) -> ingestion_pb2.ScanJob | None:
        """The job once searchable (with vectors on: embedded) or failed; else as it stands
        after ``timeout_seconds``."""
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if job is not None and job.state in DONE and self._settled(job):
                return job
            time.sleep(0.5)
        return self.job(job_id)

    def _settled(self, job: ingestion_pb2.ScanJob) -> bool:
        return (
            not self.vectors
            or job.state == ingestion_pb2.SCAN_STATE_FAILED
            or job.level == events_pb2.SCAN_LEVEL_EMBEDDED
        )

    def snapshot(self, project: str) -> Snapshot:
        return index_snapshot(
            self.addresses(),
            project,
            vectors=self.vectors,
            service_token=service_token_of(self.state()),
            api_key=self.api_key,
        )


def run_chaos(
    work: Path,
    repository: Path,
    targets: list[str],
    *,
    kill_fraction: float = 0.3,
    scan_timeout: float = 900,
    vectors: bool = False,
    ack_wait: float | None = None,
) -> dict[str, Any]:
    """The chaos part: its rows, the clean scan's figures and what the tree was."""
    tree = work / "allowed" / "tree"
    files = copy_repository(repository, tree)
    print(f"chaos: {files} files of {repository} in {tree}", flush=True)
    chaos = ChaosStack(work, vectors=vectors, ack_wait=ack_wait)
    started_in = chaos.start()
    print(f"chaos: stack up in {started_in:.1f} s; clean scan", flush=True)
    try:
        chaos.add_project("clean", tree)
        began = time.perf_counter()
        clean_job = chaos.wait_done(chaos.start_scan("clean"), scan_timeout)
        clean_seconds = time.perf_counter() - began
        if clean_job is None or clean_job.state != ingestion_pb2.SCAN_STATE_COMPLETED:
            raise RuntimeError(f"the clean scan did not complete: {clean_job}")
        clean = chaos.snapshot("clean")
        sizes = {index: len(entries) for index, entries in clean.items()}
        print(f"chaos: clean scan {clean_seconds:.1f} s, {progress(clean_job)}", flush=True)
        print(f"chaos: index sizes {sizes}", flush=True)
        ordered = [t for t in TARGETS if t in targets]  # nats-server last: it stops the stack
        runs = []
        for target in ordered:
            run = _one_target(chaos, target, tree, clean, clean_job, kill_fraction, scan_timeout)
            run.seconds = round(run.seconds, 1)
            runs.append(run)
            verdict = {k: ("identical" if not v else "DIFFERS") for k, v in run.differences.items()}
            print(f"chaos: {target}: {run.completed}, {run.seconds} s, {verdict}", flush=True)
            for note in run.notes:
                print(f"  {note}", flush=True)
    finally:
        chaos.stack.stop()
    return {
        "tree": str(repository),
        "files": files,
        "vectors": vectors,
        "ack_wait_s": ack_wait,  # None: the services' default
        "kill_fraction": kill_fraction,
        "clean_seconds": round(clean_seconds, 1),
        "clean_progress": progress(clean_job),
        "index_sizes": sizes,
        "runs": [run.__dict__ for run in runs],
    }


def _one_target(
    chaos: ChaosStack,
    target: str,
    tree: Path,
    clean: Snapshot,
    clean_job: ingestion_pb2.ScanJob,
    kill_fraction: float,
    scan_timeout: float,
) -> ChaosRun:
    project = f"chaos-{target}"
    chaos.add_project(project, tree)
    restarts_before = chaos.restarts()
    began = time.perf_counter()
    job_id = chaos.start_scan(project)
    run = ChaosRun(target, killed_at="", restarts="", completed="", seconds=0.0)
    while True:
        job = chaos.job(job_id)
        if job is not None and job.state in DONE:
            run.killed_at = "not killed: the scan ended first"
            break
        if job is not None and kill_point_reached(target, job, kill_fraction):
            pid = chaos.pid_of(target)
            os.kill(pid, signal.SIGKILL)
            run.killed_at = f"{progress(job)} ({time.perf_counter() - began:.1f} s)"
            break
        if time.perf_counter() - began > scan_timeout:
            run.killed_at = "not killed: no kill point within the scan timeout"
            break
        time.sleep(POLL_SECONDS)
    if target == "nats-server" and run.killed_at.startswith(("scanning", "queued", "indexing")):
        job = _after_nats_death(chaos, run, project, job_id, clean, scan_timeout)
    else:
        if not run.killed_at.startswith("not killed"):
            _wait_for_restart(chaos, target, pid, run)
        job = chaos.wait_done(job_id, scan_timeout)
        restarts = chaos.restarts()
        run.restarts = str(restarts.get(target, 0) - restarts_before.get(target, 0))
        others = {
            name: count - restarts_before.get(name, 0)
            for name, count in restarts.items()
            if name != target and count != restarts_before.get(name, 0)
        }
        if others:
            run.notes.append(f"other services restarted meanwhile: {others}")
    run.seconds = time.perf_counter() - began
    run.completed = completion(job)
    # (for nats-server the job is the rescan, which finds nothing left to index)
    if target != "nats-server" and job and job.state == ingestion_pb2.SCAN_STATE_COMPLETED:
        for figure in ("files_seen", "files_skipped", "files_indexed", "files_failed"):
            got, wanted = getattr(job.stats, figure), getattr(clean_job.stats, figure)
            if got != wanted:
                run.notes.append(f"{figure}: {got} (clean scan: {wanted})")
    run.differences = differences(
        chaos.snapshot(project), chaos.snapshot("clean"), score_tolerance=SCORE_TOLERANCE
    )
    for index, account in run.differences.items():
        if account:
            run.notes.append(f"{index} differ: {account}")
    return run


def _wait_for_restart(chaos: ChaosStack, target: str, pid: int, run: ChaosRun) -> None:
    killed = time.perf_counter()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if chaos.stack.wait(0) is not None:
            run.notes.append("locus up stopped instead of restarting the service")
            return
        if chaos.pid_of(target) != pid:
            seconds = time.perf_counter() - killed
            run.notes.append(f"restarted and serving {seconds:.1f} s after the kill")
            return
        time.sleep(0.2)
    run.notes.append("not restarted within 180 s")


def _after_nats_death(
    chaos: ChaosStack,
    run: ChaosRun,
    project: str,
    job_id: str,
    clean: Snapshot,
    scan_timeout: float,
) -> ingestion_pb2.ScanJob | None:
    """nats-server was killed: what `locus up` did, then `locus up` again on the same data dir,
    what became of the interrupted job, and a rescan of the project."""
    code = chaos.stack.wait(120)
    run.restarts = "- (stack stopped)" if code is not None else "- (stack still up?)"
    run.notes.append(f"locus up exited with code {code} after nats-server died")
    if code is None:
        chaos.stack.stop()
    started_in = chaos.start()
    run.notes.append(f"locus up started again on the same data dir in {started_in:.1f} s")
    job = chaos.job(job_id)
    now = progress(job) if job else "unknown"
    run.notes.append(f"the interrupted job right after the restart: {now}")
    clean_now = chaos.snapshot("clean")
    changed = {
        index: diff
        for index, diff in differences(clean_now, clean).items()
        if diff and index in STABLE_INDEXES
    }
    run.notes.append(
        f"the clean project after the restart ({', '.join(STABLE_INDEXES)}): "
        + (f"differs from before: {changed}" if changed else "identical to before")
    )
    try:
        rescan = chaos.start_scan(project)
    except grpc.RpcError as error:
        run.notes.append(f"a rescan at once is refused: {error.code().name}: {error.details()}")
        job = chaos.wait_done(job_id, scan_timeout)
        run.notes.append(f"the interrupted job itself then ended: {completion(job)}")
        rescan = chaos.start_scan(project)
    began = time.perf_counter()
    rescanned = chaos.wait_done(rescan, scan_timeout)
    changed_files = changed_file_count(rescanned) if rescanned else "?"
    run.notes.append(
        f"the rescan: {completion(rescanned)} in {time.perf_counter() - began:.1f} s, "
        f"{changed_files} files changed"
    )
    return rescanned


def completion(job: ingestion_pb2.ScanJob | None) -> str:
    if job is None:
        return "unknown (GetScan failed)"
    if job.state == ingestion_pb2.SCAN_STATE_COMPLETED:
        return "yes"
    if job.state == ingestion_pb2.SCAN_STATE_FAILED:
        return f"FAILED: {job.error[:200]}"
    return f"no: {progress(job)}"


def print_table(result: dict[str, Any]) -> None:
    runs = result["runs"]
    indexes = list(result["index_sizes"])
    ack_wait = result.get("ack_wait_s")
    print(
        f"\nchaos: {result['files']} files ({result['tree']}); ack wait "
        f"{f'{ack_wait} s' if ack_wait else 'of the services (default)'}; clean scan "
        f"{result['clean_seconds']} s ({result['clean_progress']}); index sizes "
        + ", ".join(f"{k} {v}" for k, v in result["index_sizes"].items())
    )
    print(
        "| killed | killed at (progress) | restarts | scan completed | time s | "
        + " | ".join(indexes)
        + " |"
    )
    print("|---|---|---|---|---|" + "---|" * len(indexes))
    for run in runs:
        same = ["identical" if not run["differences"].get(i) else "**differs**" for i in indexes]
        print(
            f"| {run['target']} | {run['killed_at']} | {run['restarts']} | {run['completed']} | "
            f"{run['seconds']} | " + " | ".join(same) + " |"
        )
    for run in runs:
        for note in run["notes"]:
            print(f"- {run['target']}: {note}")
