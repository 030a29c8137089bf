"""Load on the gateway (`make reliability`, part "load"): N concurrent Locate and Ask clients
(bench/locate_load.py) against `locus up` with a scanned tree, first with nothing else running,
then while full scans of a copy of the tree run (bench/scan_timing.py's FullScansInBackground):
calls answered, shed, failed by gRPC code, p50/p95 per level. Every call carries the stack's
admin key."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))

from chaos import MODEL_DIR, changed_file_count, copy_repository, progress
from locate_load import Rpc, run_load_level
from mesh_access import admin_key_of
from scan_timing import FullScansInBackground, is_searchable, poll_job, start_scan
from stack_process import BenchStack
from system_bench import QUESTIONS

from locus.rpc.bearer import bearer_interceptors
from locus.v1 import gateway_pb2_grpc, ingestion_pb2

SCAN_CHECK_SECONDS = 0.5


async def run_load(
    work: Path,
    repository: Path,
    *,
    clients: list[int],
    seconds: float,
    deadline: float,
    scan_timeout: float,
) -> dict[str, Any]:
    tree = work / "allowed" / "tree"
    copy = work / "allowed" / "copy"
    files = copy_repository(repository, tree)
    copy_repository(repository, copy)
    stack = BenchStack(
        data_dir=work / "data",
        allowed_bases=[work / "allowed"],
        locus_home=work / "home",
        model_dir=MODEL_DIR,
        console_log=work / "up.log",
        environment={"LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false"},
    )
    state, _ = stack.start()
    gateway_address = state.address_of("gateway")
    assert gateway_address is not None
    levels: list[dict[str, Any]] = []
    try:
        api_key = admin_key_of(state)
        interceptors = bearer_interceptors(api_key)
        async with grpc.aio.insecure_channel(gateway_address, interceptors=interceptors) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            await stub.CreateProject(ingestion_pb2.CreateProjectRequest(name="load"))
            await stub.AddSource(ingestion_pb2.AddSourceRequest(project_id="load", path=str(tree)))
            began = time.perf_counter()
            job_id = await start_scan(stub, "load")
            job = await poll_job(
                stub, job_id, is_searchable, started=began, timeout_seconds=scan_timeout
            )
            print(f"load: {files} files scanned ({progress(job)})", flush=True)
            background = FullScansInBackground(stub, copy, "load-copy")
            for during_scan in (False, True):
                for rpc in ("Locate", "Ask"):
                    for count in clients:
                        levels.append(
                            await _level(
                                gateway_address,
                                api_key,
                                rpc,  # type: ignore[arg-type]
                                count,
                                seconds,
                                deadline,
                                background if during_scan else None,
                            )
                        )
    finally:
        stack.stop()
    return {"files": files, "tree": str(repository), "deadline_s": deadline, "levels": levels}


async def _level(
    gateway_address: str,
    api_key: str,
    rpc: Rpc,
    clients: int,
    seconds: float,
    deadline: float,
    background: FullScansInBackground | None,
) -> dict[str, Any]:
    scans_before = len(background.scans) if background else 0
    keeping = asyncio.create_task(_keep_scanning(background)) if background else None
    try:
        level = await run_load_level(
            gateway_address,
            "load",
            QUESTIONS,
            api_key=api_key,
            clients=clients,
            duration_seconds=seconds,
            deadline_seconds=deadline,
            rpc=rpc,
        )
    finally:
        if keeping is not None:
            keeping.cancel()
    row = asdict(level) | {"rpc": rpc, "calls_per_second": round(level.calls_per_second, 1)}
    if background is not None:
        job = await background.latest_job()
        row["background"] = (
            f"full scans ({len(background.scans) - scans_before} started), the last at "
            f"{job.stats.files_indexed}/{changed_file_count(job)} searchable"
        )
    else:
        row["background"] = "none"
    print(
        f"load: {rpc}, {clients} clients: {level.succeeded} ok, shed {level.shed_codes}, "
        f"failures {level.failures}, p50 {level.p50_ms:.0f} ms, p95 {level.p95_ms:.0f} ms "
        f"({row['background']})",
        flush=True,
    )
    return row


async def _keep_scanning(background: FullScansInBackground) -> None:
    """A full scan running for the whole level: another starts as soon as one is searchable."""
    while True:
        await background.ensure_one_runs()
        await asyncio.sleep(SCAN_CHECK_SECONDS)


def print_table(result: dict[str, Any]) -> None:
    print(
        f"\nload: gateway, {result['files']} files scanned, client deadline "
        f"{result['deadline_s']} s"
    )
    print("| rpc | clients | meanwhile | ok | calls/s | shed | failed | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in result["levels"]:
        failures = ", ".join(f"{k} {v}" for k, v in row["failures"].items()) or "0"
        shed = ", ".join(f"{k} {v}" for k, v in row["shed_codes"].items()) or "0"
        print(
            f"| {row['rpc']} | {row['clients']} | {row['background']} | {row['succeeded']} | "
            f"{row['calls_per_second']} | {shed} | {failures} | {row['p50_ms']:.0f} | "
            f"{row['p95_ms']:.0f} |"
        )
    for row in result["levels"]:
        for code, message in row["first_messages"].items():
            level = f"{row['rpc']}, {row['clients']} clients, meanwhile {row['background']}"
            print(f"- {level}: first {code}: {message}")
