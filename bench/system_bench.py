"""System benchmark (`make bench`): the whole stack (`locus up` on a temporary data dir) on one
or more real repositories, every figure printed as markdown beside a baseline measured in the
same run, and where each acceptance target stands. It is a report: a missed target never
fails the command.

Repositories (``--repo``, repeatable; default: this repository). The issue's three sizes are
this repository (small), psf/requests (medium) and sympy (large, ≥ 25 MB of Python);
the large-repository targets are judged on a repository of ≥ 25 MB and shown for reference on
the others. The given directories are only read: edits happen in a copy under the temp dir.

Per repository:
1. Time to searchable: a first scan from StartScan until GetScan says COMPLETED (symbols,
   chunks, BM25, graph edges of every file in); files/s, MB/s, and the ratio to an in-process
   baseline doing the same work in one process (walk + sha256 + tree-sitter chunks + tantivy
   BM25, see `baselines`). Targets: ≥ 1 MB/s and ≤ 4x the baseline on the large repository.
2. Time to embedded: until GetScan's level is EMBEDDED; the vectors lane's rate (distinct chunk
   texts embedded per second of its batches, summed from the retrieval log's `vectors for ...`
   lines) beside the bare embedder on a sample of the same chunk texts. Target: ≥ 85 %.
3. Rescans: a no-change rescan (median of ``--rescans``) and, on a copy of the repository
   registered as a second project, one edited file (a comment line appended) until searchable,
   median of ``--edits``, beside the in-process floor (walk + hash the tree; plus re-chunking
   and re-indexing the one file). Targets: ≤ 2 s and ≤ 1.5 s.
4. Locate p50/p95, warm, through the gateway beside the gateway's own Locator in-process.
   Targets: p50 ≤ 150 ms, p95 ≤ 300 ms. Once every repository is measured, the stack is
   stopped and started again on the same data dir and the first Locate of each project is
   timed. Target: ≤ 1 s.
5. Locate under concurrency (``--clients``, each client loops for ``--load-seconds`` with a
   ``--deadline`` client deadline): idle, then while the second project's full scan runs
   (another project's full scan is started for a level when the previous one is done);
   beside the in-process Locator's one-at-a-time latency.
6. Peak RSS (VmHWM) of every process after every repository was indexed.
7. The cost of authentication, on the fresh stack before any repository: ``WhoAmI`` with the
   stack's admin key (authenticated: one key lookup) beside the gateway's gRPC health ``Check``
   (not authenticated), ``--auth-calls`` of each, one at a time (0: not measured).

Every call to the gateway carries the admin key `locus up` wrote (stack.json's
``admin_key_file``), read once per stack start.

Quick run: ``--skip-concurrency --skip-restart --edits 2 --rescans 1``; ``--skip-embedded``
does not wait for vectors (later figures then run beside a busy vectors lane);
``--embedded-up-to-mb 5`` waits for them only on repositories of at most 5 MB (sympy's 46,000
chunks take about 40 minutes to embed on 2 cores).
``--json FILE`` writes every figure. The stack runs with default settings (LOCUS_* variables
of the calling environment are not passed on; ``--setting LOCUS_NAME=VALUE`` sets one for an
A/B run, and the report's first line names it).

Usage: python bench/system_bench.py [--repo DIR ...] [--json FILE] [--skip-concurrency]
       [--skip-restart] [--skip-embedded] [--edits N] [--rescans N] [--rounds R]
       [--auth-calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from authentication_cost import measure_authentication_cost
from baselines import WalkByproducts, measure_embedder_rate, measure_indexing_baseline
from locate_latency import first_locate_milliseconds, gateway_latencies, in_process_latencies
from locate_load import LoadLevel, run_load_level
from mesh_access import admin_key_of
from report import repository_report, repository_targets, stack_report
from results import RepositoryResults, StackResults
from retrieval_log import log_size, read_vectors_activity
from scan_timing import (
    FullScansInBackground,
    time_edited_file_rescans,
    time_scan,
    time_started_scan,
)
from stack_process import BenchStack, process_cpu_seconds, process_memory

from locus.cli.stack_state import StackState
from locus.rpc import make_channel
from locus.rpc.bearer import bearer_interceptors
from locus.telemetry import Telemetry, setup_telemetry
from locus.v1 import gateway_pb2_grpc, ingestion_pb2

REPO_ROOT = Path(__file__).resolve().parents[1]
MODEL_DIR = REPO_ROOT / ".locus" / "models" / "all-minilm-l6-v2"
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


def copy_listed_files(root: Path, relative_paths: list[str], destination: Path) -> None:
    """Copy what the scanner sees of ``root`` (the files its walk yielded, ignore files
    included): the copy scans like the original, without ignored trees such as .venv."""
    for relative_path in relative_paths:
        source = root / relative_path
        if source.is_symlink() and not source.resolve().is_relative_to(root.resolve()):
            continue
        if not source.is_file():
            continue
        target = destination / relative_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def repository_label(repository: Path, taken: list[str]) -> str:
    """The directory's name in the characters a project name may hold, made unique."""
    label = re.sub(r"[^A-Za-z0-9._-]", "-", repository.name).strip(".-_")[:40] or "repo"
    return label if label not in taken else f"{label}-{len(taken) + 1}"


def scan_progress(job: ingestion_pb2.ScanJob) -> str:
    stats = job.stats
    changed = stats.files_added + stats.files_modified + stats.files_deleted
    state = ingestion_pb2.ScanState.Name(job.state).removeprefix("SCAN_STATE_").lower()
    return (
        f"scan {state}: {stats.files_indexed}/{changed} searchable, {stats.files_embedded} embedded"
    )


class RepositoryBench:
    """Measures one repository on the running stack."""

    def __init__(
        self,
        args: argparse.Namespace,
        stack: StackState,
        telemetry: Telemetry,
        work_dir: Path,
        repository: Path,
        label: str,
        api_key: str,
    ) -> None:
        self._args = args
        self._api_key = api_key  # the stack's admin key, on every call to the gateway
        self._skip_embedded = args.skip_embedded
        self._stack = stack
        self._telemetry = telemetry
        self._work_dir = work_dir
        self._repository = repository
        self._label = label  # unique in the run, usable in a project name
        self.results: RepositoryResults | None = None

    async def run(self, stamp: str) -> None:
        """Measure everything, filling ``self.results`` as it goes (so what was measured
        before a failure is still reported)."""
        args = self._args
        print(f"\n… {self._repository}: in-process baselines", flush=True)
        baseline, byproducts = await measure_indexing_baseline(
            self._repository,
            self._work_dir / "baseline-bm25" / self._label,
            sample_size=args.embed_sample,
        )
        self.results = results = RepositoryResults(
            repository=str(self._repository),
            project=f"bench-{self._label}-{stamp}",
            baseline=baseline,
        )
        # The embedded level of a repository too large to embed on these cores in reasonable
        # time (--embedded-up-to-mb) is not waited for: its figures run beside a busy lane.
        self._skip_embedded = args.skip_embedded or (
            args.embedded_up_to_mb > 0 and baseline.megabytes > args.embedded_up_to_mb
        )
        if byproducts.chunk_text_sample and not self._skip_embedded:
            results.embedder = await measure_embedder_rate(MODEL_DIR, byproducts.chunk_text_sample)
        async with make_channel(
            self._stack.address_of("gateway"),
            self._telemetry,
            default_timeout=600,
            extra_interceptors=bearer_interceptors(self._api_key),
        ) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            await self._first_scan(stub, results)
            await self._locate(stub, results)
            if not args.skip_concurrency:
                print(f"… {self._label}: Locate under load, idle", flush=True)
                results.load_idle = await self._load_levels(results.project, None)
            await self._second_project(stub, results, byproducts)

    async def _first_scan(
        self, stub: gateway_pb2_grpc.GatewayStub, results: RepositoryResults
    ) -> None:
        args = self._args
        await stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=results.project))
        await stub.AddSource(
            ingestion_pb2.AddSourceRequest(project_id=results.project, path=str(self._repository))
        )
        retrieval_log = Path(self._stack.services["retrieval"].log_file)
        log_offset = log_size(retrieval_log)
        print(f"… {self._label}: first scan", flush=True)
        cpu_before = self._cpu_seconds()

        def record_cpu() -> None:
            cpu_after = self._cpu_seconds()
            results.first_scan_cpu_seconds = {
                name: cpu_after[name] - cpu_before[name] for name in cpu_after if name in cpu_before
            }

        results.first_scan = await time_scan(
            stub,
            results.project,
            until_embedded=not self._skip_embedded,
            timeout_seconds=args.scan_timeout,
            on_searchable=record_cpu,
        )
        if not self._skip_embedded:
            results.vectors_lane = read_vectors_activity(retrieval_log, log_offset)
        print(f"… {self._label}: no-change rescans", flush=True)
        for _ in range(args.rescans):
            results.no_change_rescans.append(
                await time_scan(stub, results.project, until_embedded=False, timeout_seconds=60)
            )

    def _cpu_seconds(self) -> dict[str, float]:
        pids = {name: process.pid for name, process in self._stack.services.items()}
        pids["nats-server"] = self._stack.nats.pid
        readings = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
        return {name: seconds for name, seconds in readings.items() if seconds is not None}

    async def _locate(self, stub: gateway_pb2_grpc.GatewayStub, results: RepositoryResults) -> None:
        args = self._args
        print(f"… {self._label}: Locate latency", flush=True)
        questions = QUESTIONS[: args.queries]
        results.locate_gateway = await gateway_latencies(
            stub, results.project, questions, args.rounds
        )
        results.locate_in_process = await in_process_latencies(
            self._stack, self._telemetry, results.project, questions, args.rounds
        )

    async def _load_levels(
        self, project: str, full_scans: FullScansInBackground | None
    ) -> list[LoadLevel]:
        """One load level per client count; with ``full_scans``, a full scan runs while each
        level starts (a new one when the previous one is already searchable)."""
        args = self._args
        levels = []
        for clients in args.clients:
            started_one = full_scans is not None and await full_scans.ensure_one_runs()
            level = await run_load_level(
                self._stack.address_of("gateway"),
                project,
                QUESTIONS,
                api_key=self._api_key,
                clients=clients,
                duration_seconds=args.load_seconds,
                deadline_seconds=args.deadline,
            )
            if full_scans is not None:
                scan_number = len(full_scans.scans)
                when = "started with this level" if started_one else "already running"
                progress = scan_progress(await full_scans.latest_job())
                level = replace(
                    level, background=f"full scan {scan_number} ({when}), at the end: {progress}"
                )
            levels.append(level)
        return levels

    async def _second_project(
        self,
        stub: gateway_pb2_grpc.GatewayStub,
        results: RepositoryResults,
        byproducts: WalkByproducts,
    ) -> None:
        """A copy of the repository as a second project: its full scan runs under the
        concurrent Locate load (more projects on the copy when one scan does not last the
        load), then one of its files is edited and rescanned."""
        args = self._args
        if args.skip_concurrency and not args.edits:
            return
        copy = self._work_dir / "copies" / self._label
        await asyncio.to_thread(copy_listed_files, self._repository, byproducts.listed_paths, copy)
        full_scans = FullScansInBackground(stub, copy, f"{results.project}-copy")
        print(f"… {self._label}: second project's full scan", flush=True)
        first = await full_scans.start_another()
        if not args.skip_concurrency:
            results.load_during_scan = await self._load_levels(results.project, full_scans)
        results.second_project_scan = await time_started_scan(
            stub,
            first.job_id,
            first.started,
            until_embedded=not self._skip_embedded,
            timeout_seconds=args.scan_timeout,
        )
        if not self._skip_embedded:
            await full_scans.wait_until_all_embedded(args.scan_timeout)
        if not args.edits or not byproducts.file_to_edit:
            return
        print(f"… {self._label}: edited-file rescans", flush=True)
        results.edited_file = byproducts.file_to_edit
        results.edited_file_rescans = await time_edited_file_rescans(
            stub,
            first.project,
            copy / byproducts.file_to_edit,
            byproducts.edit_comment_prefix,
            repetitions=args.edits,
            until_embedded=not self._skip_embedded,
            timeout_seconds=120,
        )


async def measure(
    args: argparse.Namespace, work_dir: Path, bench_stack: BenchStack
) -> StackResults:
    stack_results = StackResults()
    stack, stack_results.start_seconds = await asyncio.to_thread(bench_stack.start)
    telemetry = setup_telemetry("bench", from_environment=False, set_global=False)
    stamp = time.strftime("%Y%m%d%H%M%S")
    try:
        api_key = admin_key_of(stack)
        if args.auth_calls:
            print("\n… authentication: WhoAmI beside health Check", flush=True)
            try:
                stack_results.authentication = await measure_authentication_cost(
                    stack.address_of("gateway"), api_key, calls=args.auth_calls
                )
            except Exception as error:  # a report: the other figures still count
                print(f"\n**authentication: measuring stopped: {type(error).__name__}: {error}**")
        labels: list[str] = []
        for repository in args.repo:
            labels.append(repository_label(repository, labels))
            bench = RepositoryBench(
                args, stack, telemetry, work_dir, repository, labels[-1], api_key
            )
            try:
                await bench.run(stamp)
            except Exception as error:  # a report: one failed measurement must not lose the rest
                print(f"\n**{repository}: measuring stopped: {type(error).__name__}: {error}**")
            if bench.results is not None:
                stack_results.repositories.append(bench.results)
                print("\n" + repository_report(bench.results, args.deadline), flush=True)
        stack_results.memory_after_indexing = {
            name: process_memory(process.pid) for name, process in stack.services.items()
        }
        stack_results.memory_after_indexing["nats-server"] = process_memory(stack.nats.pid)
        if not args.skip_restart:
            try:
                await measure_restart(bench_stack, stack_results, args.deadline)
            except Exception as error:
                print(f"\n**restart: measuring stopped: {type(error).__name__}: {error}**")
    finally:
        telemetry.shutdown()
    return stack_results


async def measure_restart(
    bench_stack: BenchStack, stack_results: StackResults, deadline_seconds: float
) -> None:
    print("\n… restart: stopping the stack and starting it on the same data dir", flush=True)
    await asyncio.to_thread(bench_stack.stop)
    stack, stack_results.restart_seconds = await asyncio.to_thread(bench_stack.start)
    api_key = admin_key_of(stack)
    for results in stack_results.repositories:
        first, second = await first_locate_milliseconds(
            stack.address_of("gateway"),
            results.project,
            QUESTIONS[0],
            api_key=api_key,
            deadline_seconds=deadline_seconds,
        )
        results.first_locate_after_restart_ms = first
        results.second_locate_after_restart_ms = second


def results_json(stack_results: StackResults) -> dict[str, Any]:
    def finite(value: Any) -> Any:  # NaN is not JSON
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, dict):
            return {key: finite(item) for key, item in value.items()}
        if isinstance(value, list):
            return [finite(item) for item in value]
        return value

    return finite(
        {
            "start_seconds": stack_results.start_seconds,
            "restart_seconds": stack_results.restart_seconds,
            "memory_after_indexing": {
                name: asdict(memory) if memory else None
                for name, memory in stack_results.memory_after_indexing.items()
            },
            "repositories": [results.to_json() for results in stack_results.repositories],
            "authentication": (
                asdict(stack_results.authentication) if stack_results.authentication else None
            ),
            "targets": [
                {**asdict(target), "status": target.status.strip("*")}
                for results in stack_results.repositories
                for target in repository_targets(results)
            ],
        }
    )


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Locus system benchmark: every figure beside a same-run baseline.",
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--repo", action="append", type=Path, help="a repository to measure (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--skip-concurrency", action="store_true")
    parser.add_argument("--skip-restart", action="store_true")
    parser.add_argument(
        "--skip-embedded", action="store_true", help="do not wait for the vectors lane"
    )
    parser.add_argument(
        "--embedded-up-to-mb",
        type=float,
        default=0.0,
        help="wait for the embedded level only on repositories of at most this many MB (0: all)",
    )
    parser.add_argument("--edits", type=int, default=5, help="edited-file rescans (0: none)")
    parser.add_argument("--rescans", type=int, default=3, help="no-change rescans")
    parser.add_argument("--queries", type=int, default=len(QUESTIONS))
    parser.add_argument("--rounds", type=int, default=5, help="warm Locate rounds")
    parser.add_argument(
        "--clients",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[1, 10, 50, 200],
        help="concurrent Locate clients per level (comma-separated)",
    )
    parser.add_argument("--load-seconds", type=float, default=5.0)
    parser.add_argument("--deadline", type=float, default=10.0, help="Locate client deadline")
    parser.add_argument("--embed-sample", type=int, default=512, help="texts for the embedder")
    parser.add_argument(
        "--auth-calls",
        type=int,
        default=300,
        help="WhoAmI and health Check calls for the cost of authentication (0: none)",
    )
    parser.add_argument("--scan-timeout", type=float, default=3600.0)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, data)")
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="LOCUS_NAME=VALUE",
        help="a LOCUS_* setting for the stack of this run (repeatable), for A/B runs",
    )
    args = parser.parse_args()
    args.repo = [path.resolve() for path in (args.repo or [REPO_ROOT])]
    args.environment = {}
    for setting in args.setting:
        name, equals, value = setting.partition("=")
        if not equals or not name.startswith("LOCUS_"):
            parser.error(f"--setting {setting!r}: expected LOCUS_NAME=VALUE")
        args.environment[name] = value
    return args


def main() -> None:
    args = parse_arguments()
    work_dir = Path(tempfile.mkdtemp(prefix="locus-bench-"))
    (work_dir / "copies").mkdir()
    bench_stack = BenchStack(
        data_dir=work_dir / "data",
        allowed_bases=[*dict.fromkeys(repo.parent for repo in args.repo), work_dir / "copies"],
        locus_home=work_dir / "home",
        model_dir=MODEL_DIR,
        console_log=work_dir / "locus-up.log",
        environment=args.environment,
    )
    print(
        f"# Locus system benchmark\n\n{os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the start (other work on the machine shows in every "
        f"figure); work dir {work_dir}"
        + "".join(f"; {name}={value}" for name, value in args.environment.items()),
        flush=True,
    )
    try:
        stack_results = asyncio.run(measure(args, work_dir, bench_stack))
    finally:
        bench_stack.stop()
        if not args.keep:
            shutil.rmtree(work_dir, ignore_errors=True)
    print("\n" + stack_report(stack_results))
    if args.json:
        args.json.write_text(json.dumps(results_json(stack_results), indent=2) + "\n")
        print(f"\nfigures written to {args.json}")


if __name__ == "__main__":
    main()
