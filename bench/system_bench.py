"""System benchmark: scan throughput and Locate latency on a real repository, each printed next
to a baseline measured in the same run.

- Scan: first scan and no-change rescan through the running stack (gateway → ingestion → NATS →
  ast → retrieval/impact), against a baseline of walking and hashing the same tree in-process
  (the floor any content-hash scanner pays).
- Locate: p50/p95 through the gateway over gRPC, against the same query run in-process by the
  gateway's own Locator (same downstream calls, no client→gateway hop, no request journal).

Usage: python bench/system_bench.py [--repo DIR] [--services ...] [--queries N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from locus.config import PeerAddresses
from locus.gateway.adapters.identity_reranker import IdentityReranker
from locus.gateway.adapters.peer_clients import Peer, PeerClients
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.locating import LocateQuery, Locator
from locus.gateway.request_log import OpenRequest
from locus.gateway.settings import GatewaySettings
from locus.ingestion.domain.scanner import walk_source
from locus.rpc import make_channel
from locus.telemetry import setup_telemetry
from locus.v1 import gateway_pb2, gateway_pb2_grpc, ingestion_pb2

REPO_ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "where are events dead-lettered after too many deliveries?",
    "how is the request id propagated to every span?",
    "EventBus.publish",
    "where does a scan decide which files changed?",
    "reciprocal rank fusion of bm25 and vector results",
    "which code splits long function bodies into chunks with overlap?",
    "how are source roots outside the allowed bases refused",
    "GetFileContent",
]


def baseline_walk(root: Path) -> tuple[int, int, float]:
    start = time.perf_counter()
    files = size = 0
    for item in walk_source(root, max_file_bytes=1_048_576):
        data = getattr(item, "data", None)
        if data is not None:
            hashlib.sha256(data).hexdigest()
            files += 1
            size += len(data)
    return files, size, time.perf_counter() - start


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def wait_scan(stub: gateway_pb2_grpc.GatewayStub, job_id: str) -> ingestion_pb2.ScanJob:
    while True:
        job = await stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
        if job.state in (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED):
            return job
        await asyncio.sleep(0.2)


async def run(args: argparse.Namespace, state: dict[str, object]) -> None:
    addresses = {name: str(entry["address"]) for name, entry in state["services"].items()}  # type: ignore[union-attr]
    telemetry = setup_telemetry("bench", from_environment=False, set_global=False)
    repo: Path = args.repo
    files, size, seconds = await asyncio.to_thread(baseline_walk, repo)
    print(f"\nrepository {repo}: {files} indexable files, {size / 1e6:.1f} MB")
    print(
        f"baseline walk+sha256 in-process: {seconds:.2f} s = {files / seconds:.0f} files/s, "
        f"{size / 1e6 / seconds:.1f} MB/s"
    )
    async with make_channel(addresses["gateway"], telemetry, default_timeout=600) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        name = f"bench-{int(time.time())}"
        await stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=name))
        await stub.AddSource(ingestion_pb2.AddSourceRequest(project_id=name, path=str(repo)))
        print(
            "\n| scan | seconds | files | files/s | MB/s | vs baseline |\n|---|---|---|---|---|---|"
        )
        for label in ("first scan", "no-change rescan"):
            start = time.perf_counter()
            job = await stub.StartScan(ingestion_pb2.StartScanRequest(project_id=name))
            job = await wait_scan(stub, job.job_id)
            elapsed = time.perf_counter() - start
            seen = job.stats.files_seen - job.stats.files_skipped
            changed = job.stats.files_added + job.stats.files_modified
            print(
                f"| {label} | {elapsed:.1f} | {seen} (changed {changed}) "
                f"| {seen / elapsed:.0f} | {job.stats.bytes_read / 1e6 / elapsed:.1f} "
                f"| {elapsed / seconds:.1f}x the baseline |"
            )
        questions = QUESTIONS[: args.queries]
        through_gateway: list[float] = []
        for _ in range(args.rounds):
            for question in questions:
                start = time.perf_counter()
                await stub.Locate(gateway_pb2.LocateRequest(project_id=name, question=question))
                through_gateway.append((time.perf_counter() - start) * 1000)

    settings = GatewaySettings(
        peers=PeerAddresses(
            gateway_addr=addresses["gateway"],
            ingestion_addr=addresses["ingestion"],
            ast_addr=addresses["ast"],
            retrieval_addr=addresses["retrieval"],
            impact_addr=addresses["impact"],
            answer_addr=addresses["answer"],
        )
    )
    clients = PeerClients.connect(
        telemetry,
        default_timeout=60,
        ingestion=Peer("ingestion", addresses["ingestion"], 30),
        ast=Peer("ast", addresses["ast"], 30),
        retrieval=Peer("retrieval", addresses["retrieval"], 30),
        impact=Peer("impact", addresses["impact"], 30),
        answer=Peer("answer", addresses["answer"], 30),
    )
    await clients.start()
    locator = Locator(
        settings,
        clients.ingestion,
        clients.retrieval,
        clients.ast,
        clients.impact,
        RankingV1(),
        IdentityReranker(),
        telemetry.tracer("bench"),
    )
    in_process: list[float] = []
    for _ in range(args.rounds):
        for question in questions:
            entry = OpenRequest("bench", "locate", name, datetime.now(UTC), time.monotonic())  # type: ignore[arg-type]
            start = time.perf_counter()
            await locator.locate(LocateQuery(project_ref=name, question=question), entry)
            in_process.append((time.perf_counter() - start) * 1000)
    await clients.stop()
    p50g, p95g = percentile(through_gateway, 0.5), percentile(through_gateway, 0.95)
    p50i, p95i = percentile(in_process, 0.5), percentile(in_process, 0.95)
    print(f"\n| Locate ({len(through_gateway)} calls) | p50 ms | p95 ms |\n|---|---|---|")
    print(f"| through the gateway (gRPC, journaled) | {p50g:.1f} | {p95g:.1f} |")
    print(f"| in-process Locator (same downstream calls) | {p50i:.1f} | {p95i:.1f} |")
    print(f"| ratio gateway / in-process | {p50g / p50i:.2f} | {p95g / p95i:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=str(REPO_ROOT))
    parser.add_argument("--queries", type=int, default=len(QUESTIONS))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    args.repo = Path(args.repo).resolve()
    work = Path(tempfile.mkdtemp(prefix="locus-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCUS_")}
    env["LOCUS_HOME"] = str(work / "home")
    locus = Path(sys.executable).parent / "locus"
    up = subprocess.Popen(
        [
            str(locus),
            "up",
            "--data-dir",
            str(work / "data"),
            "--allow-base",
            str(Path(args.repo).resolve().parent),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        state_file = work / "data" / "stack.json"
        deadline = time.monotonic() + 300
        while not state_file.exists():
            if up.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("locus up did not start")
            time.sleep(0.5)
        asyncio.run(run(args, json.loads(state_file.read_text())))
    finally:
        os.killpg(up.pid, signal.SIGINT)
        up.wait(timeout=120)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
