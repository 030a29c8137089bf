"""--json output: stable keys, always present, enum values as short lower-case names."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from locus.cli.json_output import (
    dumps,
    line_span,
    locate_json,
    project_json,
    request_json,
    scan_elapsed_seconds,
    scan_json,
    source_json,
    symbol_json,
)
from locus.v1 import (
    answer_pb2,
    common_pb2,
    events_pb2,
    gateway_pb2,
    impact_pb2,
    ingestion_pb2,
)

pytestmark = pytest.mark.unit

SYMBOL_KEYS = {
    "node_id",
    "name",
    "qualified_name",
    "scope_name",
    "kind",
    "path",
    "start_line",
    "end_line",
    "location",
    "language",
    "file_id",
    "snapshot_id",
    "signature",
    "docstring",
    "parent_qualified_name",
}


def a_symbol(name: str = "upload", start: int = 45, end: int = 52) -> common_pb2.Symbol:
    return common_pb2.Symbol(
        node_id="n_1",
        qualified_name=f"uploads.client.UploadClient.{name}",
        scope_name=f"UploadClient.{name}",
        name=name,
        kind=common_pb2.SYMBOL_KIND_METHOD,
        location=common_pb2.CodeLocation(
            relative_path="uploads/client.py",
            start_line=start,
            end_line=end,
            language="python",
            file_id="f_1",
            snapshot_id="snap_1",
        ),
        signature=f"def {name}(self)",
        parent_qualified_name="uploads.client.UploadClient",
    )


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [(45, 52, "a.py:45-52"), (7, 7, "a.py:7"), (7, 0, "a.py:7"), (0, 0, "a.py")],
)
def test_line_span_is_what_editors_open(start: int, end: int, expected: str) -> None:
    assert line_span("a.py", start, end) == expected


def test_project_keys_are_present_even_when_unset() -> None:
    data = project_json(ingestion_pb2.Project(project_id="p_1", name="demo"))
    assert data == {
        "project_id": "p_1",
        "name": "demo",
        "system": "",
        "subsystem": "",
        "created_at": "",
        "latest_snapshot_id": "",
    }


def test_timestamps_are_iso_utc() -> None:
    project = ingestion_pb2.Project(project_id="p_1")
    project.created_at.FromDatetime(datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert project_json(project)["created_at"] == "2025-01-02T03:04:05.000Z"


def test_source_kind_is_a_short_name() -> None:
    data = source_json(
        ingestion_pb2.Source(
            source_id="src_1", kind=ingestion_pb2.SOURCE_KIND_LOCAL_DIRECTORY, path="/r"
        )
    )
    assert data["kind"] == "local_directory"
    assert set(data) == {
        "source_id",
        "project_id",
        "kind",
        "path",
        "git_url",
        "git_ref",
        "credential_file",
        "credential_env",
        "poll_seconds",
        "last_commit_sha",
        "created_at",
    }


def test_a_finished_scan_has_stats_and_throughput() -> None:
    job = ingestion_pb2.ScanJob(
        job_id="job_1",
        state=ingestion_pb2.SCAN_STATE_COMPLETED,
        level=events_pb2.SCAN_LEVEL_SEARCHABLE,
        stats=events_pb2.ScanStats(
            files_seen=40, files_added=30, files_unchanged=8, files_skipped=2, bytes_read=2_000_000
        ),
    )
    data = scan_json(job, elapsed_seconds=4.0)
    assert data["state"] == "completed"
    assert data["level"] == "searchable"
    assert data["stats"]["files_added"] == 30
    assert set(data["stats"]) == {
        "files_seen",
        "files_skipped",
        "files_added",
        "files_modified",
        "files_deleted",
        "files_unchanged",
        "bytes_read",
        "files_parsed",
        "files_indexed",
        "files_failed",
        "files_embedded",
        "files_embedding_failed",
    }
    assert data["files_per_second"] == 10.0
    assert data["megabytes_per_second"] == 0.5
    assert data["elapsed_seconds"] == 4.0
    assert "files_per_second" not in scan_json(job)


def test_elapsed_prefers_the_servers_clock() -> None:
    job = ingestion_pb2.ScanJob()
    assert scan_elapsed_seconds(job, fallback=9.0) == 9.0
    job.created_at.FromDatetime(datetime(2025, 1, 1, 0, 0, 0, tzinfo=UTC))
    job.completed_at.FromDatetime(datetime(2025, 1, 1, 0, 0, 3, tzinfo=UTC))
    assert scan_elapsed_seconds(job, fallback=9.0) == 3.0


def test_symbol_keys_and_location() -> None:
    data = symbol_json(a_symbol())
    assert set(data) == SYMBOL_KEYS
    assert data["kind"] == "method"
    assert data["location"] == "uploads/client.py:45-52"
    assert (data["start_line"], data["end_line"]) == (45, 52)


def test_locate_nests_files_symbols_evidence_and_impact() -> None:
    evidence = gateway_pb2.Evidence(signal="bm25", detail="retry", weight=0.5, chunk_id="c_1")
    located = gateway_pb2.LocatedSymbol(symbol=a_symbol(), score=0.9, evidence=[evidence])
    reply = gateway_pb2.LocateResponse(
        request_id="r_1",
        snapshot_id="snap_1",
        files=[
            gateway_pb2.LocatedFile(
                file_id="f_1",
                relative_path="uploads/client.py",
                language="python",
                score=0.8,
                symbols=[located],
                evidence=[evidence],
            )
        ],
        symbols=[located],
        impact=impact_pb2.ComputeImpactResponse(
            symbols=[
                impact_pb2.ImpactedSymbol(
                    symbol=a_symbol("_retry"),
                    score=0.4,
                    distance=1,
                    reason=[
                        impact_pb2.ImpactStep(
                            relation=common_pb2.RELATION_KIND_OVERRIDES, reverse=True
                        )
                    ],
                )
            ],
            files=[impact_pb2.ImpactedFile(file_id="f_2", relative_path="b.py", distance=2)],
        ),
    )
    data = locate_json(reply)
    assert set(data) == {"request_id", "snapshot_id", "files", "symbols", "impact"}
    file = data["files"][0]
    assert set(file) == {
        "file_id",
        "path",
        "language",
        "score",
        "project_id",
        "project_name",
        "evidence",
        "symbols",
    }
    assert (file["project_id"], file["project_name"]) == ("", "")  # one project: keys stay
    assert file["evidence"][0] == {
        "signal": "bm25",
        "detail": "retry",
        "weight": 0.5,
        "chunk_id": "c_1",
    }
    assert set(file["symbols"][0]) == SYMBOL_KEYS | {"score", "evidence"}
    assert data["symbols"][0]["score"] == 0.9
    assert set(data["impact"]["symbols"][0]) == SYMBOL_KEYS | {"score", "distance", "reason"}
    assert data["impact"]["symbols"][0]["reason"] == [{"relation": "overrides", "reverse": True}]
    assert data["impact"]["files"][0] == {
        "file_id": "f_2",
        "path": "b.py",
        "score": 0.0,
        "distance": 2,
    }
    json.loads(dumps(data))


def test_a_scoped_locate_names_each_files_project() -> None:
    reply = gateway_pb2.LocateResponse(
        files=[
            gateway_pb2.LocatedFile(
                relative_path="src/tax.py", project_id="p_2", project_name="invoices"
            )
        ]
    )
    file = locate_json(reply)["files"][0]
    assert (file["project_id"], file["project_name"]) == ("p_2", "invoices")


def test_request_record_with_citations() -> None:
    record = gateway_pb2.RequestRecord(
        request_id="r_1",
        kind="ask",
        status="completed",
        latency_ms=120,
        citations=[
            answer_pb2.Citation(
                citation_id="C1",
                chunk_id="c_1",
                location=common_pb2.CodeLocation(relative_path="a.py", start_line=3, end_line=9),
            )
        ],
    )
    data = request_json(record)
    assert set(data) == {
        "request_id",
        "project_id",
        "project_name",
        "project_ref",
        "kind",
        "question",
        "status",
        "created_at",
        "completed_at",
        "latency_ms",
        "answer_text",
        "citations",
    }
    assert data["citations"][0]["location"] == "a.py:3-9"
