"""``locus scan --wait``: poll GetScan until the job is searchable (or, with ``--embedded``,
until its vectors are in too) or fails, drawing files seen, parsed, searchable and embedded as
progress bars (on stderr, so stdout stays clean for --json)."""

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
            embedded = to_index or 0  # no vectors are made here, or every file has them
        self._progress.update(self._embedded, completed=embedded, total=to_index)


def finished(job: ingestion_pb2.ScanJob, *, embedded: bool) -> bool:
    """Whether a follower waiting for searchable (or, with ``embedded``, embedded) is done."""
    if job.state == ingestion_pb2.SCAN_STATE_FAILED:
        return True
    if job.state != ingestion_pb2.SCAN_STATE_COMPLETED:
        return False
    return not embedded or job.level == events_pb2.SCAN_LEVEL_EMBEDDED


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
        disable=not show_progress,
        transient=False,
    )
    with progress:
        bars = _ScanBars(progress)
        while True:
            bars.update(job)
            if finished(job, embedded=embedded):
                return job
            if timeout_seconds and time.monotonic() - started > timeout_seconds:
                raise CliError(
                    f"scan {job.job_id} is still {state_label(job)} after {timeout_seconds:.0f} s; "
                    "it goes on in the background",
                    ExitCode.FAILED,
                )
            await asyncio.sleep(POLL_SECONDS)
            job = await source.get_scan(job.job_id)
