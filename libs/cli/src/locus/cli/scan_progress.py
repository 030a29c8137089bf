"""``locus scan --wait``: poll GetScan until the job is searchable (or, with ``--embedded``,
until its vectors are in too) or fails, drawing files seen, parsed, searchable and embedded as
progress bars on a terminal, or as a plain line on each change of state and every
``PLAIN_LINE_SECONDS`` elsewhere (a CI log); on stderr, so stdout stays clean for --json.
Waiting for vectors that do not come (no retrieval embeds: its vectors lane is off) says so
once after ``VECTORS_STALL_SECONDS``."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from locus.cli.exit_codes import CliError, ExitCode
from locus.v1 import events_pb2, ingestion_pb2

WALKING_STATES = frozenset({ingestion_pb2.SCAN_STATE_QUEUED, ingestion_pb2.SCAN_STATE_SCANNING})
POLL_SECONDS = 0.25
PLAIN_LINE_SECONDS = 10.0
VECTORS_STALL_SECONDS = 60.0


class ScanSource(Protocol):
    async def get_scan(self, job_id: str) -> ingestion_pb2.ScanJob: ...


def changed_files(job: ingestion_pb2.ScanJob) -> int:
    stats = job.stats
    return int(stats.files_added + stats.files_modified + stats.files_deleted)


def state_label(job: ingestion_pb2.ScanJob) -> str:
    return ingestion_pb2.ScanState.Name(job.state).removeprefix("SCAN_STATE_").lower()


class _ScanBars:
    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._seen: TaskID = progress.add_task("files seen", total=None)
        self._parsed: TaskID = progress.add_task("parsed", total=None)
        self._indexed: TaskID = progress.add_task("searchable", total=None)
        self._embedded: TaskID = progress.add_task("embedded", total=None)

    def update(self, job: ingestion_pb2.ScanJob) -> None:
        stats = job.stats
        walked = job.state not in WALKING_STATES
        # Totals are known once the walk is over: every file seen, and the changed ones to index.
        to_index = changed_files(job) if walked else None
        self._progress.update(
            self._seen,
            completed=stats.files_seen,
            total=stats.files_seen if walked else None,
            description=f"files seen ({state_label(job)})",
        )
        self._progress.update(self._parsed, completed=stats.files_parsed, total=to_index)
        self._progress.update(
            self._indexed, completed=stats.files_indexed + stats.files_failed, total=to_index
        )
        embedded = stats.files_embedded + stats.files_embedding_failed + stats.files_failed
        if job.level == events_pb2.SCAN_LEVEL_EMBEDDED:
            embedded = to_index or 0  # every file has its vectors
        self._progress.update(
            self._embedded,
            completed=embedded,
            total=to_index,
            description="embedded (none made here)" if job.without_vectors else "embedded",
        )


def _embedded_count(job: ingestion_pb2.ScanJob) -> int:
    stats = job.stats
    return int(stats.files_embedded + stats.files_embedding_failed + stats.files_failed)


def progress_line(job: ingestion_pb2.ScanJob) -> str:
    """One line of a scan's progress, for a console that is no terminal."""
    stats = job.stats
    walked = job.state not in WALKING_STATES
    of = f"/{changed_files(job)}" if walked else ""
    level = events_pb2.ScanLevel.Name(job.level).removeprefix("SCAN_LEVEL_").lower()
    embedded = "-" if job.without_vectors else f"{_embedded_count(job)}{of}"
    return (
        f"scan {job.job_id} {state_label(job)}"
        + (f" ({level})" if job.level else "")
        + f": seen {stats.files_seen}  parsed {stats.files_parsed}{of}  "
        f"searchable {stats.files_indexed + stats.files_failed}{of}  "
        f"embedded {embedded}"
    )


class _PlainLines:
    """Progress as lines: one whenever the state or level changes, and one every
    ``PLAIN_LINE_SECONDS`` while nothing does."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._last: tuple[int, int] | None = None
        self._printed_at = 0.0

    def update(self, job: ingestion_pb2.ScanJob) -> None:
        now = time.monotonic()
        key = (int(job.state), int(job.level))
        if key != self._last or now - self._printed_at >= PLAIN_LINE_SECONDS:
            self._console.print(progress_line(job), markup=False, highlight=False, soft_wrap=True)
            self._last, self._printed_at = key, now


class _VectorsStall:
    """Notices a searchable job whose embedded count stands still while --embedded waits."""

    def __init__(self) -> None:
        self._count = -1
        self._since = 0.0
        self.told = False

    def stalled(self, job: ingestion_pb2.ScanJob) -> bool:
        if self.told or job.state != ingestion_pb2.SCAN_STATE_COMPLETED:
            return False
        now, count = time.monotonic(), _embedded_count(job)
        if count != self._count:
            self._count, self._since = count, now
            return False
        self.told = now - self._since >= VECTORS_STALL_SECONDS
        return self.told


def vectors_stall_hint(job: ingestion_pb2.ScanJob) -> str:
    return (
        f"no file of scan {job.job_id} got its vectors in {VECTORS_STALL_SECONDS:.0f} s; "
        "its files are searchable already. Vectors come from retrieval's vectors lane: where it "
        "is off (LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED=false) they wait until a retrieval that "
        "embeds runs. Still waiting; Ctrl-C stops following (the scan goes on)."
    )


def finished(job: ingestion_pb2.ScanJob, *, embedded: bool) -> bool:
    """Whether a follower waiting for searchable (or, with ``embedded``, embedded) is done."""
    if job.state == ingestion_pb2.SCAN_STATE_FAILED:
        return True
    if job.state != ingestion_pb2.SCAN_STATE_COMPLETED:
        return False
    # Where no vectors are made, searchable is as far as a job goes.
    return not embedded or job.without_vectors or job.level == events_pb2.SCAN_LEVEL_EMBEDDED


async def follow_scan(
    source: ScanSource,
    job: ingestion_pb2.ScanJob,
    console: Console,
    *,
    show_progress: bool,
    timeout_seconds: float = 0.0,
    embedded: bool = False,
) -> ingestion_pb2.ScanJob:
    """Wait for ``job`` to be searchable (``embedded``: to have its vectors too) or fail;
    ``timeout_seconds`` 0 waits as long as it takes."""
    started = time.monotonic()
    progress = Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not show_progress or not console.is_terminal,
        transient=False,
    )
    plain = show_progress and not console.is_terminal
    stall = _VectorsStall()
    with progress:
        bars: _ScanBars | _PlainLines = _PlainLines(console) if plain else _ScanBars(progress)
        while True:
            if show_progress:
                bars.update(job)
            if finished(job, embedded=embedded):
                return job
            if embedded and stall.stalled(job):
                console.print(vectors_stall_hint(job), style="yellow", markup=False)
            if timeout_seconds and time.monotonic() - started > timeout_seconds:
                raise CliError(
                    f"scan {job.job_id} is still {state_label(job)} after {timeout_seconds:.0f} s; "
                    "it goes on in the background",
                    ExitCode.FAILED,
                )
            await asyncio.sleep(POLL_SECONDS)
            job = await source.get_scan(job.job_id)
