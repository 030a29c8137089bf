"""Every figure one run of the system benchmark measured, per repository and for the stack,
and their JSON form (``--json FILE``): the measured values plus the derived rates and ratios
the report prints, so a later comparison needs no recomputation."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from authentication_cost import AuthenticationCost
from baselines import EmbedderRate, IndexingBaseline
from locate_latency import LatencySummary
from locate_load import LoadLevel
from retrieval_log import VectorsLaneActivity
from scan_timing import ScanTiming
from stack_process import ProcessMemory

LARGE_REPOSITORY_MEGABYTES = 25.0


@dataclass
class RepositoryResults:
    repository: str
    project: str
    baseline: IndexingBaseline
    first_scan: ScanTiming | None = None
    # CPU seconds each process (the services and nats-server) used from StartScan to searchable
    first_scan_cpu_seconds: dict[str, float] = field(default_factory=dict)
    vectors_lane: VectorsLaneActivity | None = None
    embedder: EmbedderRate | None = None
    no_change_rescans: list[ScanTiming] = field(default_factory=list)
    locate_gateway: LatencySummary | None = None
    locate_in_process: LatencySummary | None = None
    load_idle: list[LoadLevel] = field(default_factory=list)
    load_during_scan: list[LoadLevel] = field(default_factory=list)
    second_project_scan: ScanTiming | None = None  # the copy's full scan (under load if any)
    edited_file: str = ""
    edited_file_rescans: list[ScanTiming] = field(default_factory=list)
    first_locate_after_restart_ms: float | None = None
    second_locate_after_restart_ms: float | None = None

    @property
    def is_large(self) -> bool:
        return self.baseline.megabytes >= LARGE_REPOSITORY_MEGABYTES

    @property
    def searchable_ratio(self) -> float | None:
        """Stack seconds to searchable / baseline seconds."""
        if self.first_scan is None:
            return None
        return self.first_scan.searchable_seconds / self.baseline.seconds

    @property
    def lane_rate_ratio(self) -> float | None:
        """The vectors lane's embedding rate / the bare embedder's."""
        if not self.vectors_lane or not self.embedder or not self.vectors_lane.busy_seconds:
            return None
        return self.vectors_lane.embedded_per_busy_second / self.embedder.texts_per_second

    @property
    def edit_searchable_median(self) -> float | None:
        return _median([t.searchable_seconds for t in self.edited_file_rescans])

    @property
    def edit_embedded_median(self) -> float | None:
        return _median(
            [t.embedded_seconds for t in self.edited_file_rescans if t.embedded_seconds is not None]
        )

    @property
    def no_change_rescan_median(self) -> float | None:
        return _median([t.searchable_seconds for t in self.no_change_rescans])

    def to_json(self) -> dict[str, Any]:
        figures = asdict(self)
        scan, lane = self.first_scan, self.vectors_lane
        figures["derived"] = {
            "baseline_files_per_second": self.baseline.files_per_second,
            "baseline_megabytes_per_second": self.baseline.megabytes_per_second,
            "searchable_files_per_second": scan.files_per_second if scan else None,
            "searchable_megabytes_per_second": scan.megabytes_per_second if scan else None,
            "searchable_stack_over_baseline": self.searchable_ratio,
            "vectors_lane_texts_per_busy_second": lane.embedded_per_busy_second if lane else None,
            "vectors_lane_over_bare_embedder": self.lane_rate_ratio,
            "edited_file_searchable_median_seconds": self.edit_searchable_median,
            "edited_file_embedded_median_seconds": self.edit_embedded_median,
            "no_change_rescan_median_seconds": self.no_change_rescan_median,
            "load_idle_calls_per_second": [level.calls_per_second for level in self.load_idle],
            "load_during_scan_calls_per_second": [
                level.calls_per_second for level in self.load_during_scan
            ],
        }
        return figures


@dataclass
class StackResults:
    start_seconds: float = 0.0
    restart_seconds: float | None = None  # from `locus up` on the same data dir to serving
    memory_after_indexing: dict[str, ProcessMemory | None] = field(default_factory=dict)
    repositories: list[RepositoryResults] = field(default_factory=list)
    authentication: AuthenticationCost | None = None  # WhoAmI beside health Check


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None
