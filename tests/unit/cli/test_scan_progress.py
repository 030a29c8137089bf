"""`locus scan --wait` polls until the job ends, and gives up when told to."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from locus.cli import scan_progress
from locus.cli.exit_codes import CliError
from locus.cli.scan_progress import changed_files, follow_scan
from locus.v1 import events_pb2, ingestion_pb2

pytestmark = pytest.mark.unit


def a_job(state: ingestion_pb2.ScanState, **stats: int) -> ingestion_pb2.ScanJob:
    return ingestion_pb2.ScanJob(job_id="job_1", state=state, stats=events_pb2.ScanStats(**stats))


class ScriptedScans:
    def __init__(self, jobs: list[ingestion_pb2.ScanJob]) -> None:
        self._jobs = jobs
        self.polls = 0

    async def get_scan(self, job_id: str) -> ingestion_pb2.ScanJob:
        self.polls += 1
        return self._jobs[min(self.polls - 1, len(self._jobs) - 1)]


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_progress, "POLL_SECONDS", 0.001)


def quiet_console() -> Console:
    return Console(file=io.StringIO(), width=100)


async def test_follows_the_job_until_it_completes() -> None:
    scans = ScriptedScans(
        [
            a_job(ingestion_pb2.SCAN_STATE_SCANNING),
            a_job(ingestion_pb2.SCAN_STATE_INDEXING, files_seen=4, files_added=3, files_parsed=1),
            a_job(ingestion_pb2.SCAN_STATE_COMPLETED, files_seen=4, files_added=3, files_indexed=3),
        ]
    )
    done = await follow_scan(
        scans, a_job(ingestion_pb2.SCAN_STATE_QUEUED), quiet_console(), show_progress=True
    )
    assert done.state == ingestion_pb2.SCAN_STATE_COMPLETED
    assert scans.polls == 3


async def test_a_failed_job_ends_the_wait() -> None:
    scans = ScriptedScans([a_job(ingestion_pb2.SCAN_STATE_FAILED)])
    done = await follow_scan(
        scans, a_job(ingestion_pb2.SCAN_STATE_QUEUED), quiet_console(), show_progress=False
    )
    assert done.state == ingestion_pb2.SCAN_STATE_FAILED


async def test_gives_up_after_the_timeout() -> None:
    scans = ScriptedScans([a_job(ingestion_pb2.SCAN_STATE_INDEXING)])
    with pytest.raises(CliError, match="still indexing"):
        await follow_scan(
            scans,
            a_job(ingestion_pb2.SCAN_STATE_INDEXING),
            quiet_console(),
            show_progress=False,
            timeout_seconds=0.01,
        )


def test_changed_files_are_the_ones_to_index() -> None:
    job = a_job(
        ingestion_pb2.SCAN_STATE_INDEXING,
        files_added=2,
        files_modified=3,
        files_deleted=1,
        files_unchanged=9,
    )
    assert changed_files(job) == 6
