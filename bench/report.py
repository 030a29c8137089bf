"""The system benchmark's report: markdown tables of the figures in `results`, each beside
its same-run baseline, and where each acceptance target stands (met / not met). Nothing here
fails the run: the report says what was measured."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from authentication_cost import AuthenticationCost
from locate_latency import LatencySummary
from locate_load import LoadLevel
from results import LARGE_REPOSITORY_MEGABYTES, RepositoryResults, StackResults


def number(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:,.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass(frozen=True)
class Target:
    name: str
    repository: str
    figure: float | None
    limit: float
    unit: str
    at_least: bool  # True: the figure must be ≥ the limit; False: ≤
    note: str = ""

    @property
    def status(self) -> str:
        if self.figure is None or math.isnan(self.figure):
            return "not measured"
        met = self.figure >= self.limit if self.at_least else self.figure <= self.limit
        return "met" if met else "**not met**"

    def row(self) -> list[str]:
        sign = "≥" if self.at_least else "≤"
        return [
            self.name,
            self.repository,
            f"{number(self.figure, 2)} {self.unit}",
            f"{sign} {number(self.limit, 2)} {self.unit}",
            self.status + (f" ({self.note})" if self.note else ""),
        ]


def repository_targets(results: RepositoryResults) -> list[Target]:
    name = results.repository
    size_note = (
        ""
        if results.is_large
        else f"reference only: the target is for a repository ≥ {LARGE_REPOSITORY_MEGABYTES:.0f} MB"
    )
    scan = results.first_scan
    targets = [
        Target(
            "time to searchable: throughput",
            name,
            scan.megabytes_per_second if scan else None,
            1.0,
            "MB/s",
            at_least=True,
            note=size_note,
        ),
        Target(
            "time to searchable: stack / in-process baseline",
            name,
            results.searchable_ratio,
            4.0,
            "x",
            at_least=False,
            note=size_note,
        ),
        Target(
            "vectors lane rate / bare embedder rate",
            name,
            None if results.lane_rate_ratio is None else results.lane_rate_ratio * 100,
            85.0,
            "%",
            at_least=True,
        ),
        Target(
            "one edited file → searchable (median)",
            name,
            results.edit_searchable_median,
            1.5,
            "s",
            at_least=False,
        ),
        Target(
            "no-change rescan → searchable (median)",
            name,
            results.no_change_rescan_median,
            2.0,
            "s",
            at_least=False,
        ),
        Target(
            "Locate warm p50 (gateway)",
            name,
            results.locate_gateway.p50_ms if results.locate_gateway else None,
            150.0,
            "ms",
            at_least=False,
        ),
        Target(
            "Locate warm p95 (gateway)",
            name,
            results.locate_gateway.p95_ms if results.locate_gateway else None,
            300.0,
            "ms",
            at_least=False,
        ),
        Target(
            "first Locate after a restart",
            name,
            results.first_locate_after_restart_ms,
            1000.0,
            "ms",
            at_least=False,
        ),
    ]
    return targets


def searchable_table(results: RepositoryResults) -> str:
    baseline = results.baseline
    rows = []
    if results.first_scan is not None:
        scan = results.first_scan
        rows.append(
            [
                "stack: StartScan → GetScan COMPLETED (first scan)",
                number(scan.searchable_seconds, 2),
                f"{scan.files_changed:,}",
                number(scan.files_per_second, 0),
                number(scan.megabytes_read, 1),
                number(scan.megabytes_per_second, 2),
                f"{number(results.searchable_ratio, 2)}x",
            ]
        )
    rows.append(
        [
            "baseline in-process: walk + sha256 + tree-sitter chunks + tantivy BM25",
            number(baseline.seconds, 2),
            f"{baseline.files:,}",
            number(baseline.files_per_second, 0),
            number(baseline.megabytes, 1),
            number(baseline.megabytes_per_second, 2),
            "1.00x",
        ]
    )
    table = markdown_table(
        ["time to searchable", "seconds", "files", "files/s", "MB", "MB/s", "vs baseline"], rows
    )
    notes = [
        f"baseline: {baseline.chunks:,} chunks; walk+hash {baseline.walk_seconds:.2f} s, "
        f"chunking {baseline.chunking_seconds:.2f} s, BM25 {baseline.bm25_seconds:.2f} s "
        "(one process; symbols, relations and graph edges are extracted but not stored)."
    ]
    if results.first_scan_cpu_seconds:
        cpu = results.first_scan_cpu_seconds
        spent = ", ".join(
            f"{name} {seconds:.1f}" for name, seconds in sorted(cpu.items(), key=lambda i: -i[1])
        )
        notes.append(
            f"CPU seconds from StartScan to searchable: {spent} "
            f"(total {sum(cpu.values()):.1f}; the baseline used one core for "
            f"{baseline.seconds:.1f} s)."
        )
    if results.first_scan is not None and results.first_scan.state != "SCAN_STATE_COMPLETED":
        notes.append(
            f"the scan ended {results.first_scan.state}: {results.first_scan.error or '-'}"
        )
    if results.first_scan is not None and results.first_scan.files_failed:
        notes.append(f"{results.first_scan.files_failed} files failed to index.")
    return table + "\n\n" + "\n".join(notes)


def embedded_table(results: RepositoryResults) -> str:
    rows = []
    scan = results.first_scan
    if scan is not None and scan.embedded_seconds is not None:
        rows.append(
            [
                "stack: StartScan → GetScan level EMBEDDED (first scan)",
                number(scan.embedded_seconds, 2),
                f"{scan.files_embedded:,} files ({scan.files_embedding_failed} failed)",
                f"{number(scan.files_embedded / scan.embedded_seconds, 1)} files/s",
                "—",
            ]
        )
    lane = results.vectors_lane
    embedder = results.embedder
    if lane is not None and lane.batches:
        ratio = results.lane_rate_ratio
        rows.append(
            [
                f"vectors lane: sum of its {lane.batches} `vectors for` log lines "
                f"(first start → last end: {lane.span_seconds:.1f} s)",
                number(lane.busy_seconds, 2),
                f"{lane.texts_embedded:,} texts embedded (+ {lane.cache_hits:,} cache hits)",
                f"{number(lane.embedded_per_busy_second, 1)} texts/s",
                f"{number(None if ratio is None else ratio * 100, 0)} %",
            ]
        )
        rows.append(
            [
                "vectors lane: chunks written (cache hits included), same seconds",
                number(lane.busy_seconds, 2),
                f"{lane.chunks_written:,} chunks",
                f"{number(lane.written_per_busy_second, 1)} chunks/s",
                "—",
            ]
        )
    if embedder is not None:
        rows.append(
            [
                "baseline: bare OnnxEmbedder.embed, distinct chunk texts of this repository "
                f"(same model, threads, batch; {embedder.texts_per_cpu_second:.1f} texts per "
                f"CPU-second; load average {embedder.load_average:.1f} when it began)",
                number(embedder.texts / embedder.texts_per_second, 2),
                f"{embedder.texts:,} texts",
                f"{number(embedder.texts_per_second, 1)} texts/s",
                "100 %",
            ]
        )
    if not rows:
        return "(time to embedded not measured)"
    return markdown_table(["time to embedded", "seconds", "work", "rate", "vs baseline"], rows)


def rescan_table(results: RepositoryResults) -> str:
    baseline = results.baseline
    walk = number(baseline.walk_seconds, 2)
    one_file = (
        number(baseline.walk_seconds + baseline.one_file_seconds, 2)
        if baseline.one_file_seconds is not None
        else "—"
    )
    rows = []
    edits = results.edited_file_rescans
    if edits:
        rows.append(
            [
                f"one edited file ({results.edited_file}) → searchable",
                number(results.edit_searchable_median, 2),
                ", ".join(number(t.searchable_seconds, 2) for t in edits),
                f"{one_file} (walk + hash the tree, re-chunk and re-index the file)",
                "≤ 1.5 s",
            ]
        )
    if results.edit_embedded_median is not None:
        rows.append(
            [
                "the same edits → embedded",
                number(results.edit_embedded_median, 2),
                ", ".join(number(t.embedded_seconds, 2) for t in results.edited_file_rescans),
                "—",
                "—",
            ]
        )
    if results.no_change_rescans:
        rows.append(
            [
                "no-change rescan → searchable",
                number(results.no_change_rescan_median, 2),
                ", ".join(number(t.searchable_seconds, 2) for t in results.no_change_rescans),
                f"{walk} (walk + hash the tree)",
                "≤ 2 s",
            ]
        )
    second = results.second_project_scan
    if second is not None:
        under = " (under the Locate load)" if results.load_during_scan else ""
        rows.append(
            [
                f"second project on a copy of the repository: full scan → searchable{under}",
                number(second.searchable_seconds, 2),
                f"{second.files_changed:,} files, {number(second.megabytes_per_second, 2)} MB/s"
                + (
                    f"; embedded at {second.embedded_seconds:.1f} s (embedding cache hits)"
                    if second.embedded_seconds is not None
                    else ""
                ),
                f"{number(baseline.seconds, 2)} (section 1)",
                "—",
            ]
        )
    if not rows:
        return "(rescans not measured)"
    return markdown_table(
        ["rescan", "median s", "runs (s)", "in-process baseline s", "target"], rows
    )


def locate_table(results: RepositoryResults) -> str:
    gateway, in_process = results.locate_gateway, results.locate_in_process
    if gateway is None or in_process is None:
        return "(Locate latency not measured)"
    return markdown_table(
        [f"Locate, warm ({gateway.calls} calls, one at a time)", "p50 ms", "p95 ms"],
        [
            [
                "through the gateway (gRPC, journaled)",
                number(gateway.p50_ms),
                number(gateway.p95_ms),
            ],
            [
                "baseline: in-process Locator (same downstream calls)",
                number(in_process.p50_ms),
                number(in_process.p95_ms),
            ],
            [
                "ratio gateway / in-process",
                number(gateway.p50_ms / in_process.p50_ms, 2),
                number(gateway.p95_ms / in_process.p95_ms, 2),
            ],
        ],
    )


def load_table(
    levels: Sequence[LoadLevel], deadline_seconds: float, in_process: LatencySummary | None
) -> str:
    rows = [
        [
            str(level.clients),
            level.background or "idle",
            number(level.seconds, 1),
            f"{level.succeeded:,}",
            number(level.calls_per_second, 1),
            number(level.p50_ms, 0),
            number(level.p95_ms, 0),
            str(level.shed),
            ", ".join(f"{code} {count}" for code, count in sorted(level.failures.items())) or "0",
        ]
        for level in levels
    ]
    table = markdown_table(
        [
            "clients",
            "meanwhile",
            "seconds",
            "calls ok",
            "calls/s",
            "p50 ms",
            "p95 ms (ok calls)",
            "shed (RESOURCE_EXHAUSTED/UNAVAILABLE)",
            f"other failures ({deadline_seconds:.0f} s deadline)",
        ],
        rows,
    )
    if in_process is None:
        return table
    return (
        f"{table}\n\nbaseline: the in-process Locator, one call at a time (section 4): "
        f"p50 {number(in_process.p50_ms)} ms, p95 {number(in_process.p95_ms)} ms, so about "
        f"{number(1000 / in_process.p50_ms, 1)} calls/s."
    )


def authentication_table(cost: AuthenticationCost) -> str:
    who_am_i, health = cost.who_am_i, cost.health_check
    return markdown_table(
        [f"gateway call ({who_am_i.calls} of each, one at a time)", "p50 ms", "p95 ms"],
        [
            [
                "WhoAmI with the admin key (authentication: one key lookup)",
                number(who_am_i.p50_ms, 2),
                number(who_am_i.p95_ms, 2),
            ],
            [
                "baseline: gRPC health Check (no authentication)",
                number(health.p50_ms, 2),
                number(health.p95_ms, 2),
            ],
            [
                "authentication: WhoAmI minus health Check",
                number(who_am_i.p50_ms - health.p50_ms, 2),
                number(who_am_i.p95_ms - health.p95_ms, 2),
            ],
        ],
    )


def repository_report(results: RepositoryResults, deadline_seconds: float) -> str:
    baseline = results.baseline
    sections = [
        f"## {results.repository}\n\n{baseline.files:,} indexable files, "
        f"{baseline.megabytes:.1f} MB (project `{results.project}`)",
        "### 1. Time to searchable\n\n" + searchable_table(results),
        "### 2. Time to embedded\n\n" + embedded_table(results),
        "### 3. Rescans\n\n" + rescan_table(results),
        "### 4. Locate latency\n\n" + locate_table(results),
    ]
    levels = [*results.load_idle, *results.load_during_scan]
    if levels:
        sections.append(
            "### 5. Locate under concurrency\n\n"
            + load_table(levels, deadline_seconds, results.locate_in_process)
        )
    return "\n\n".join(sections)


def stack_report(stack: StackResults) -> str:
    sections = []
    memory_rows = [
        [
            name,
            number(memory.peak_rss_mib, 0) if memory else "—",
            number(memory.current_rss_mib, 0) if memory else "—",
        ]
        for name, memory in stack.memory_after_indexing.items()
    ]
    if memory_rows:
        sections.append(
            "## 6. Memory of each process after indexing every repository\n\n"
            + markdown_table(["process", "peak RSS MiB (VmHWM)", "RSS now MiB"], memory_rows)
        )
    if stack.restart_seconds is not None:
        rows = [
            ["stack start (first `locus up`, empty data dir)", number(stack.start_seconds, 1)],
            ["stack restart (`locus up` on the same data dir)", number(stack.restart_seconds, 1)],
        ]
        for results in stack.repositories:
            rows.append(
                [
                    f"first Locate after the restart, {results.repository} "
                    f"(second call: {number(results.second_locate_after_restart_ms, 0)} ms)",
                    number(results.first_locate_after_restart_ms, 0) + " ms",
                ]
            )
        sections.append(
            "## Restart (Locate, section 4)\n\n"
            + markdown_table(["after a restart", "seconds / ms"], rows)
        )
    if stack.authentication is not None:
        sections.append(
            "## 7. Cost of authentication\n\n" + authentication_table(stack.authentication)
        )
    targets = [target for results in stack.repositories for target in repository_targets(results)]
    sections.append(
        "## Targets\n\n"
        + markdown_table(
            ["target", "repository", "measured", "target", "status"],
            [target.row() for target in targets],
        )
    )
    return "\n\n".join(sections)
