"""What the retrieval service's vectors lane did, read from its log: one line per batch,

    <asctime> INFO retrieval ... vectors for 64 parts (0 stale) in 3.21s: 812 chunks written,
    60 files embedded, cache 10 hits / 790 embedded (totals 10 / 790); 0.00s yielded to
    searchable work

(the batch's own time leaves out the seconds it waited for the searchable path to go quiet),
summed over the lines written after a given offset of the log file (the start of a scan).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

VECTORS_BATCH = re.compile(
    r"^(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*vectors for (?P<parts>\d+) parts "
    r"\((?P<stale>\d+) stale\) in (?P<seconds>[\d.]+)s: (?P<written>\d+) chunks written, "
    r"(?P<files>\d+) files embedded, cache (?P<hits>\d+) hits / (?P<embedded>\d+) embedded"
)
LOG_TIME_FORMAT = "%Y-%m-%d %H:%M:%S,%f"


@dataclass(frozen=True)
class VectorsLaneActivity:
    batches: int = 0
    busy_seconds: float = 0.0  # the sum of the batches' own durations
    span_seconds: float = 0.0  # from the start of the first batch to the end of the last
    chunks_written: int = 0  # vectors upserted (cache hits included)
    texts_embedded: int = 0  # distinct chunk contents the model embedded (cache misses)
    cache_hits: int = 0
    files_embedded: int = 0

    @property
    def embedded_per_busy_second(self) -> float:
        return self.texts_embedded / self.busy_seconds if self.busy_seconds else 0.0

    @property
    def written_per_busy_second(self) -> float:
        return self.chunks_written / self.busy_seconds if self.busy_seconds else 0.0


def log_size(log_file: Path) -> int:
    try:
        return log_file.stat().st_size
    except OSError:
        return 0


def read_vectors_activity(log_file: Path, from_offset: int) -> VectorsLaneActivity:
    with log_file.open("rb") as handle:
        handle.seek(from_offset)
        text = handle.read().decode("utf-8", errors="replace")
    batches = [match for line in text.splitlines() if (match := VECTORS_BATCH.match(line))]
    if not batches:
        return VectorsLaneActivity()
    first_end = datetime.strptime(batches[0]["time"], LOG_TIME_FORMAT)
    last_end = datetime.strptime(batches[-1]["time"], LOG_TIME_FORMAT)
    first_start = first_end.timestamp() - float(batches[0]["seconds"])
    return VectorsLaneActivity(
        batches=len(batches),
        busy_seconds=sum(float(match["seconds"]) for match in batches),
        span_seconds=last_end.timestamp() - first_start,
        chunks_written=sum(int(match["written"]) for match in batches),
        texts_embedded=sum(int(match["embedded"]) for match in batches),
        cache_hits=sum(int(match["hits"]) for match in batches),
        files_embedded=sum(int(match["files"]) for match in batches),
    )
