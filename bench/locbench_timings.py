"""Index time per repository (first scan, incremental rescans) and Locate latency p50/p95 from
the JSON lines `locus locbench-rank --timings FILE` appends, as markdown tables.

Usage: python bench/locbench_timings.py TIMINGS.jsonl"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summarize(rows: list[dict[str, Any]]) -> str:
    by_project: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_project[row["project"]].append(row)
    lines = [
        "| project | instances | first scan s (files) | incremental scans: median s | max s "
        "| median files changed |",
        "|---|---|---|---|---|---|",
    ]
    for project, runs in sorted(by_project.items()):
        first, rest = runs[0], runs[1:]
        incremental = [r["scan_seconds"] for r in rest]
        changed = [r["files_changed"] for r in rest]
        lines.append(
            f"| {project} | {len(runs)} | {first['scan_seconds']:.1f} ({first['files_changed']}) "
            f"| {statistics.median(incremental) if incremental else 0:.1f} "
            f"| {max(incremental, default=0):.1f} "
            f"| {statistics.median(changed) if changed else 0:.0f} |"
        )
    locate = [r["locate_seconds"] * 1000 for r in rows]
    lines += [
        "",
        f"Locate through the gateway over {len(locate)} bug reports: "
        f"p50 {percentile(locate, 0.5):.0f} ms, p95 {percentile(locate, 0.95):.0f} ms",
    ]
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = Path(sys.argv[1])
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    print(summarize(rows))


if __name__ == "__main__":
    main()
