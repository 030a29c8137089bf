"""Hostile files under `locus up` (`make reliability`, part "hostile"): a tree of files built to
hurt a scanner (bench/reliability/hostile_tree.py's ``build_hostile_tree(root)``, which returns
relative path → what the file is) scanned as a project; per file whether it was indexed or
skipped and why, whether the scan completed, and whether every process survived.

While hostile_tree.py is not there, this part reports that and does nothing else."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chaos import ChaosStack, completion
from mesh_access import internal_channel, service_token_of

from locus.v1 import common_pb2, ingestion_pb2, ingestion_pb2_grpc

HOSTILE_TREE = Path(__file__).with_name("hostile_tree.py")


def tree_builder() -> Callable[[Path], dict[str, str]] | None:
    """``build_hostile_tree`` from hostile_tree.py, or None while that file does not exist."""
    if not HOSTILE_TREE.exists():
        return None
    spec = importlib.util.spec_from_file_location("hostile_tree", HOSTILE_TREE)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {HOSTILE_TREE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    builder: Callable[[Path], dict[str, str]] = module.build_hostile_tree
    return builder


def run_hostile(work: Path, *, scan_timeout: float) -> dict[str, Any]:
    build = tree_builder()
    if build is None:
        return {"missing": f"{HOSTILE_TREE.relative_to(HOSTILE_TREE.parents[2])} does not exist"}
    tree = work / "allowed" / "hostile"
    tree.mkdir(parents=True)
    built = build(tree)
    stack = ChaosStack(work, vectors=False)
    stack.start()
    try:
        stack.add_project("hostile", tree)
        began = time.perf_counter()
        job_id = stack.start_scan("hostile")
        job = stack.wait_done(job_id, scan_timeout)
        seconds = time.perf_counter() - began
        token = service_token_of(stack.state())
        with internal_channel(stack.addresses()["ingestion"], token) as channel:
            ingestion = ingestion_pb2_grpc.IngestionServiceStub(channel)
            indexed = _indexed(ingestion, "hostile")
            skipped = _skipped(ingestion, job_id)
        restarts = stack.restarts()
        alive = stack.stack.wait(0) is None
    finally:
        stack.stack.stop()
    rows = []
    for path, what in built.items():
        if path in skipped:
            outcome = f"skipped ({skipped[path]})"
        elif path in indexed:
            outcome = f"indexed ({indexed[path]})"
        else:
            outcome = "neither listed as a file nor as skipped"
        rows.append({"path": path, "what": what, "outcome": outcome})
    unexpected = sorted((set(indexed) | set(skipped)) - set(built))
    return {
        "files": len(built),
        "completed": completion(job),
        "seconds": round(seconds, 1),
        "rows": rows,
        "listed_but_not_built": unexpected,
        "restarts": {name: count for name, count in restarts.items() if count},
        "locus_up_running": alive,
    }


def _indexed(ingestion: ingestion_pb2_grpc.IngestionServiceStub, project: str) -> dict[str, str]:
    found: dict[str, str] = {}
    token = ""
    while True:
        page = ingestion.ListFiles(
            ingestion_pb2.ListFilesRequest(
                project_id=project, page=common_pb2.PageRequest(page_size=500, page_token=token)
            ),
            timeout=30,
        )
        for file in page.files:
            found[file.relative_path] = f"{file.language or 'no language'}, {file.size_bytes} B"
        token = page.next_page_token
        if not token:
            return found


def _skipped(ingestion: ingestion_pb2_grpc.IngestionServiceStub, job_id: str) -> dict[str, str]:
    found: dict[str, str] = {}
    token = ""
    while True:
        page = ingestion.ListSkippedFiles(
            ingestion_pb2.ListSkippedFilesRequest(
                job_id=job_id, page=common_pb2.PageRequest(page_size=500, page_token=token)
            ),
            timeout=30,
        )
        for file in page.files:
            found[file.relative_path] = f"{file.reason}: {file.detail}"[:160]
        token = page.next_page_token
        if not token:
            return found


def print_table(result: dict[str, Any]) -> None:
    if "missing" in result:
        print(f"\nhostile files: not run, {result['missing']} (the hook is in place)")
        return
    print(
        f"\nhostile files: {result['files']} built; scan completed: {result['completed']} in "
        f"{result['seconds']} s; services restarted: {result['restarts'] or 'none'}; "
        f"locus up still running: {result['locus_up_running']}"
    )
    print("| file | what it is | outcome |")
    print("|---|---|---|")
    for row in result["rows"]:
        path = row["path"].encode("utf-8", "backslashreplace").decode()
        print(f"| `{path}` | {row['what']} | {row['outcome']} |")
    if result["listed_but_not_built"]:
        print(f"listed but not built: {result['listed_but_not_built']}")
