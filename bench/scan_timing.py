"""Timing scan jobs through the gateway: from StartScan until GetScan says the job is
searchable (state COMPLETED: symbols, chunks, BM25 entries and graph edges of every changed
file are in) and, optionally, embedded (level EMBEDDED: their vectors too).

GetScan is polled every 1 % of the time elapsed so far (20 ms at least, 1 s at most): short
jobs are timed to a few tens of milliseconds, and polling never costs a long scan much CPU.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from locus.v1 import events_pb2, gateway_pb2_grpc, ingestion_pb2

FASTEST_POLL_SECONDS = 0.02
SLOWEST_POLL_SECONDS = 1.0
DONE_STATES = (ingestion_pb2.SCAN_STATE_COMPLETED, ingestion_pb2.SCAN_STATE_FAILED)


class ScanTimeout(Exception):
    pass


@dataclass(frozen=True)
class ScanTiming:
    searchable_seconds: float
    embedded_seconds: float | None  # None: not waited for
    state: str
    error: str
    files_changed: int
    files_seen: int
    megabytes_read: float
    files_indexed: int
    files_failed: int
    files_embedded: int
    files_embedding_failed: int

    @property
    def files_per_second(self) -> float:
        return self.files_changed / self.searchable_seconds

    @property
    def megabytes_per_second(self) -> float:
        return self.megabytes_read / self.searchable_seconds


def is_searchable(job: ingestion_pb2.ScanJob) -> bool:
    return job.state in DONE_STATES


def is_embedded(job: ingestion_pb2.ScanJob) -> bool:
    return job.state == ingestion_pb2.SCAN_STATE_FAILED or (
        job.state == ingestion_pb2.SCAN_STATE_COMPLETED
        and (job.without_vectors or job.level == events_pb2.SCAN_LEVEL_EMBEDDED)
    )


async def poll_job(
    stub: gateway_pb2_grpc.GatewayStub,
    job_id: str,
    reached: Callable[[ingestion_pb2.ScanJob], bool],
    *,
    started: float,
    timeout_seconds: float,
) -> ingestion_pb2.ScanJob:
    """GetScan until ``reached(job)``; ``started`` is the perf_counter() the timing began."""
    while True:
        job = await stub.GetScan(ingestion_pb2.GetScanRequest(job_id=job_id))
        if reached(job):
            return job
        elapsed = time.perf_counter() - started
        if elapsed > timeout_seconds:
            raise ScanTimeout(f"scan {job_id} not done after {elapsed:.0f} s: {job}")
        await asyncio.sleep(min(SLOWEST_POLL_SECONDS, max(FASTEST_POLL_SECONDS, elapsed / 100)))


async def start_scan(stub: gateway_pb2_grpc.GatewayStub, project: str) -> str:
    job = await stub.StartScan(ingestion_pb2.StartScanRequest(project_id=project))
    return str(job.job_id)


async def time_scan(
    stub: gateway_pb2_grpc.GatewayStub,
    project: str,
    *,
    until_embedded: bool,
    timeout_seconds: float,
    on_searchable: Callable[[], None] | None = None,
) -> ScanTiming:
    started = time.perf_counter()
    job_id = await start_scan(stub, project)
    return await time_started_scan(
        stub,
        job_id,
        started,
        until_embedded=until_embedded,
        timeout_seconds=timeout_seconds,
        on_searchable=on_searchable,
    )


async def time_started_scan(
    stub: gateway_pb2_grpc.GatewayStub,
    job_id: str,
    started: float,
    *,
    until_embedded: bool,
    timeout_seconds: float,
    on_searchable: Callable[[], None] | None = None,
) -> ScanTiming:
    """Seconds from ``started`` to searchable (and to embedded); ``on_searchable`` runs the
    moment the job is searchable, before waiting for vectors."""
    job = await poll_job(
        stub, job_id, is_searchable, started=started, timeout_seconds=timeout_seconds
    )
    searchable = time.perf_counter() - started
    if on_searchable is not None:
        on_searchable()
    embedded: float | None = None
    if until_embedded:
        job = await poll_job(
            stub, job_id, is_embedded, started=started, timeout_seconds=timeout_seconds
        )
        embedded = time.perf_counter() - started
    stats = job.stats
    return ScanTiming(
        searchable_seconds=searchable,
        embedded_seconds=embedded,
        state=ingestion_pb2.ScanState.Name(job.state),
        error=job.error,
        files_changed=stats.files_added + stats.files_modified + stats.files_deleted,
        files_seen=stats.files_seen - stats.files_skipped,
        megabytes_read=stats.bytes_read / 1e6,
        files_indexed=stats.files_indexed,
        files_failed=stats.files_failed,
        files_embedded=stats.files_embedded,
        files_embedding_failed=stats.files_embedding_failed,
    )


def append_comment(path: Path, comment_prefix: str, number: int) -> None:
    text = path.read_text(encoding="utf-8")
    separator = "" if text.endswith("\n") or not text else "\n"
    path.write_text(f"{text}{separator}{comment_prefix} locus bench edit {number}\n", "utf-8")


async def time_edited_file_rescans(
    stub: gateway_pb2_grpc.GatewayStub,
    project: str,
    edited_file: Path,
    comment_prefix: str,
    *,
    repetitions: int,
    until_embedded: bool,
    timeout_seconds: float,
) -> list[ScanTiming]:
    """Append a comment line to ``edited_file`` and rescan, ``repetitions`` times; each rescan
    is timed to searchable and, with ``until_embedded``, to embedded (the next edit waits)."""
    timings = []
    for number in range(1, repetitions + 1):
        append_comment(edited_file, comment_prefix, number)
        timings.append(
            await time_scan(
                stub, project, until_embedded=until_embedded, timeout_seconds=timeout_seconds
            )
        )
    return timings


@dataclass(frozen=True)
class StartedScan:
    project: str
    job_id: str
    started: float  # perf_counter() just before StartScan


class FullScansInBackground:
    """Keeps a full scan of one directory running (the Locate load is measured meanwhile):
    each new scan is of a new project on that directory, so it indexes every file again
    (the embedding cache still spares the vectors lane most of its work)."""

    def __init__(
        self, stub: gateway_pb2_grpc.GatewayStub, directory: Path, project_prefix: str
    ) -> None:
        self._stub = stub
        self._directory = directory
        self._project_prefix = project_prefix
        self.scans: list[StartedScan] = []

    async def start_another(self) -> StartedScan:
        project = f"{self._project_prefix}-{len(self.scans) + 1}"
        await self._stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=project))
        await self._stub.AddSource(
            ingestion_pb2.AddSourceRequest(project_id=project, path=str(self._directory))
        )
        started = time.perf_counter()
        scan = StartedScan(project, await start_scan(self._stub, project), started)
        self.scans.append(scan)
        return scan

    async def ensure_one_runs(self) -> bool:
        """Start another scan unless the latest one is still on its way to searchable;
        whether one was started."""
        if self.scans and not is_searchable(await self.latest_job()):
            return False
        await self.start_another()
        return True

    async def latest_job(self) -> ingestion_pb2.ScanJob:
        return await self._stub.GetScan(ingestion_pb2.GetScanRequest(job_id=self.scans[-1].job_id))

    async def wait_until_all_embedded(self, timeout_seconds: float) -> None:
        for scan in self.scans:
            await poll_job(
                self._stub,
                scan.job_id,
                is_embedded,
                started=scan.started,
                timeout_seconds=timeout_seconds,
            )
