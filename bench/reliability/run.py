"""`make reliability`: figures on how Locus behaves when things go wrong, each part on its own
`locus up` on loopback with private temp dirs (not part of `make test`):

- chaos: kill -9 of ingestion, ast, retrieval, impact and nats-server mid-scan; restarts, whether
  the scan completed, and whether each index equals a clean scan's (chaos.py);
- fuzz: every public RPC with generated and random requests; status codes, crashed processes;
  the gateway's methods with bad credentials, all to be refused UNAUTHENTICATED (fuzz.py);
- hostile: a tree of hostile files scanned; indexed or skipped (why) per file (hostile.py);
- load: concurrent Locate and Ask clients, idle and during a scan; codes, p50/p95 (load.py);
- dlq: a real dead letter, listed and replayed with `locus dlq` (dead_letters.py).

    python bench/reliability/run.py [--parts chaos,fuzz,hostile,load,dlq] [--json out.json]

Exit status 1 when a part found a defect (an index that differs, a scan that did not complete,
UNKNOWN/INTERNAL, a dead process, a bad credential not refused, a failed load call other
than a deadline)."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chaos
import dead_letters
import fuzz
import hostile
import load

PARTS = ("chaos", "fuzz", "hostile", "load", "dlq")


def main() -> int:
    arguments = parse_arguments()
    results: dict[str, Any] = {"command": " ".join(sys.argv)}
    healthy = True
    for part in arguments.parts:
        began = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix=f"locus-reliability-{part}-"))
        print(f"== {part} (work dir {work})", flush=True)
        try:
            result, report, ok = run_part(part, work, arguments)
        except Exception as error:  # one part failing must not lose the others' figures
            result, report, ok = {"error": repr(error)}, _print_error, False
            print(f"{part} failed: {error!r}", flush=True)
            for log in work.glob("*.log"):
                print(f"last lines of {log}:\n{log.read_text(errors='replace')[-3000:]}")
        finally:
            if not arguments.keep:
                shutil.rmtree(work, ignore_errors=True)
        result["part_seconds"] = round(time.monotonic() - began, 1)
        results[part] = result
        healthy = healthy and ok
        report(result)
        print(f"({part}: {result['part_seconds']} s)", flush=True)
        if arguments.json:
            arguments.json.write_text(json.dumps(results, indent=2, default=str))
    return 0 if healthy else 1


def run_part(
    part: str, work: Path, arguments: argparse.Namespace
) -> tuple[dict[str, Any], Callable[[dict[str, Any]], None], bool]:
    """The part's result, its printer and whether it found no defect."""
    if part == "chaos":
        result = chaos.run_chaos(
            work,
            arguments.repo,
            arguments.chaos_targets,
            kill_fraction=arguments.kill_at,
            scan_timeout=arguments.scan_timeout,
            vectors=arguments.vectors,
            ack_wait=arguments.ack_wait,
        )
        ok = all(
            run["completed"] == "yes" and not any(run["differences"].values())
            for run in result["runs"]
        )
        return result, chaos.print_table, ok
    if part == "fuzz":
        result = fuzz.run(arguments.requests, work)
        return result, fuzz.print_report, fuzz.healthy(result)
    if part == "hostile":
        result = hostile.run_hostile(work, scan_timeout=arguments.scan_timeout)
        ok = "missing" in result or (result["completed"] == "yes" and result["locus_up_running"])
        return result, hostile.print_table, ok
    if part == "load":
        result = asyncio.run(
            load.run_load(
                work,
                arguments.repo,
                clients=arguments.clients,
                seconds=arguments.load_seconds,
                deadline=arguments.deadline,
                scan_timeout=arguments.scan_timeout,
            )
        )
        ok = all(set(level["failures"]) <= {"DEADLINE_EXCEEDED"} for level in result["levels"])
        return result, load.print_table, ok
    if part == "dlq":
        result = dead_letters.run_dead_letters(work)
        ok = "stream_sequence" in result.get("letter", {})
        ok = ok and result.get("replay", {"exit": 0})["exit"] == 0
        return result, dead_letters.print_table, ok
    raise ValueError(f"unknown part {part}")


def _print_error(result: dict[str, Any]) -> None:
    print(f"error: {result['error']}")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parts",
        type=lambda value: [p.strip() for p in value.split(",") if p.strip()],
        default=list(PARTS),
        help=f"comma-separated, of {','.join(PARTS)} (default: all)",
    )
    parser.add_argument("--json", type=Path, help="write every part's figures here")
    parser.add_argument(
        "--repo", type=Path, default=chaos.REPO_ROOT, help="tree to scan (chaos, load)"
    )
    parser.add_argument(
        "--chaos-targets",
        type=lambda value: [p.strip() for p in value.split(",") if p.strip()],
        default=list(chaos.TARGETS),
        help=f"processes to kill, of {','.join(chaos.TARGETS)}",
    )
    parser.add_argument(
        "--kill-at", type=float, default=0.3, help="fraction of files parsed at the kill"
    )
    parser.add_argument("--scan-timeout", type=float, default=900.0, help="seconds per scan")
    parser.add_argument(
        "--vectors", action="store_true", help="chaos: keep retrieval's vectors lane on"
    )
    parser.add_argument(
        "--ack-wait",
        type=float,
        help="chaos: the consumers' ack wait in seconds (default: the services' own)",
    )
    parser.add_argument("--requests", type=int, default=10_000, help="fuzz: requests in all")
    parser.add_argument("--clients", type=int, nargs="+", default=[4, 16], help="load levels")
    parser.add_argument("--load-seconds", type=float, default=15.0, help="per load level")
    parser.add_argument("--deadline", type=float, default=30.0, help="load: client deadline")
    parser.add_argument("--keep", action="store_true", help="keep the work dirs (logs)")
    arguments = parser.parse_args()
    unknown = set(arguments.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {','.join(PARTS)}")
    return arguments


if __name__ == "__main__":
    sys.exit(main())
