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


async def test_a_console_that_is_no_terminal_gets_a_line_on_each_change() -> None:
    scans = ScriptedScans(
        [
            a_job(ingestion_pb2.SCAN_STATE_INDEXING, files_seen=4, files_added=3, files_parsed=1),
            a_job(ingestion_pb2.SCAN_STATE_INDEXING, files_seen=4, files_added=3, files_parsed=2),
            a_job(
                ingestion_pb2.SCAN_STATE_COMPLETED,
                files_seen=4,
                files_added=3,
                files_parsed=3,
                files_indexed=3,
            ),
        ]
    )
    log = io.StringIO()
    await follow_scan(
        scans, a_job(ingestion_pb2.SCAN_STATE_SCANNING), Console(file=log), show_progress=True
    )
    lines = log.getvalue().splitlines()
    assert lines == [
        "scan job_1 scanning: seen 0  parsed 0  searchable 0  embedded 0",
        "scan job_1 indexing: seen 4  parsed 1/3  searchable 0/3  embedded 0/3",
        "scan job_1 completed: seen 4  parsed 3/3  searchable 3/3  embedded 0/3",
    ]


async def test_no_progress_lines_are_printed_when_progress_is_off() -> None:
    log = io.StringIO()
    await follow_scan(
        ScriptedScans([a_job(ingestion_pb2.SCAN_STATE_COMPLETED)]),
        a_job(ingestion_pb2.SCAN_STATE_QUEUED),
        Console(file=log),
        show_progress=False,
    )
    assert log.getvalue() == ""


async def test_vectors_that_do_not_come_are_named_once_while_the_wait_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scan_progress, "VECTORS_STALL_SECONDS", 0.0)
    searchable = a_job(ingestion_pb2.SCAN_STATE_COMPLETED, files_added=3, files_indexed=3)
    searchable.level = events_pb2.SCAN_LEVEL_SEARCHABLE
    embedded = a_job(
        ingestion_pb2.SCAN_STATE_COMPLETED, files_added=3, files_indexed=3, files_embedded=3
    )
    embedded.level = events_pb2.SCAN_LEVEL_EMBEDDED
    scans = ScriptedScans([searchable] * 5 + [embedded])
    log = io.StringIO()
    done = await follow_scan(
        scans, searchable, Console(file=log, width=400), show_progress=False, embedded=True
    )
    assert done.level == events_pb2.SCAN_LEVEL_EMBEDDED
    text = log.getvalue()
    assert text.count("got its vectors") == 1
    assert "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED=false" in text
    assert "searchable already" in text


async def test_waiting_for_searchable_never_speaks_of_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scan_progress, "VECTORS_STALL_SECONDS", 0.0)
    log = io.StringIO()
    await follow_scan(
        ScriptedScans([a_job(ingestion_pb2.SCAN_STATE_COMPLETED)]),
        a_job(ingestion_pb2.SCAN_STATE_INDEXING),
        Console(file=log),
        show_progress=False,
    )
    assert "vectors" not in log.getvalue()


def test_changed_files_are_the_ones_to_index() -> None:
    job = a_job(
        ingestion_pb2.SCAN_STATE_INDEXING,
        files_added=2,
        files_modified=3,
        files_deleted=1,
        files_unchanged=9,
    )
    assert changed_files(job) == 6


async def test_where_no_vectors_are_made_waiting_for_them_ends_at_searchable() -> None:
    searchable = a_job(ingestion_pb2.SCAN_STATE_COMPLETED, files_added=2, files_indexed=2)
    searchable.level = events_pb2.SCAN_LEVEL_SEARCHABLE
    searchable.without_vectors = True
    scans = ScriptedScans([searchable])
    log = io.StringIO()
    done = await follow_scan(
        scans, searchable, Console(file=log), show_progress=True, embedded=True
    )
    assert done is searchable
    assert scans.polls == 0
    assert log.getvalue().splitlines() == [
        "scan job_1 completed (searchable): seen 0  parsed 0/2  searchable 2/2  embedded -"
    ]
