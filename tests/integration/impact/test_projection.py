"""The graph projection's service layer on a real store, its reports read through the
``IndexReporter`` port (a recording fake beside the port; the bus adapter is exercised by
test_impact_service.py): what a job hears about each file it sent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from locus.impact.adapters.messages import parsed_file_from_event
from locus.impact.adapters.store import ImpactStore
from locus.impact.domain import FileReport
from locus.impact.projection import GraphProjection

pytestmark = pytest.mark.integration


class RecordingReporter:
    def __init__(self) -> None:
        self.reports: list[FileReport] = []

    async def report(self, reports: Sequence[FileReport]) -> None:
        self.reports.extend(reports)


async def test_a_job_hears_of_each_complete_file_and_of_a_superseded_one(
    impact_store: ImpactStore, uploads: dict[str, Any]
) -> None:
    reporter = RecordingReporter()
    changed: list[str] = []
    projection = GraphProjection(impact_store, reporter, on_change=changed.append)
    client = uploads["client.py"]
    parts = [parsed_file_from_event(e) for e in client.event("j2", 2, parts=2)]

    await projection.apply_batch(parts[:1])
    assert reporter.reports == []  # one part of two: not complete yet
    await projection.apply_batch(parts[1:])
    [indexed] = reporter.reports
    assert (indexed.job_id, indexed.file_id, indexed.status) == ("j2", parts[0].file_id, "indexed")
    assert changed == [client.project_id, client.project_id]

    older = [replace(part, job_id="j1", snapshot_seq=1) for part in parts]
    await projection.apply_batch(older)
    stale = reporter.reports[1:]
    assert {(r.job_id, r.status, r.error) for r in stale} == {
        ("j1", "skipped", "superseded by snapshot 2")
    }

    unjobbed = [replace(part, job_id="", snapshot_seq=3) for part in parts]
    await projection.apply_batch(unjobbed)
    assert len(reporter.reports) == 1 + len(stale)  # nobody waits for a report


async def test_a_file_that_can_never_be_applied_is_reported_failed_with_its_reason(
    impact_store: ImpactStore, uploads: dict[str, Any]
) -> None:
    reporter = RecordingReporter()
    projection = GraphProjection(impact_store, reporter)
    [part] = [parsed_file_from_event(e) for e in uploads["policy.py"].event("j5", 5)]
    failed = FileReport(
        "j5",
        part.project_id,
        part.snapshot_id,
        part.file_id,
        part.sha256,
        part.change,
        "failed",
        "InvalidParsedFile: a relation names no kind",
    )

    await projection.report_failure(failed)
    await projection.report_failure(replace(failed, job_id=""))

    assert reporter.reports == [failed]
