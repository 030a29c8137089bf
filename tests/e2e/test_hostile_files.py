"""Hostile files in a scanned tree (issue 12), through the real stack (`locus up`: ingestion → ast
→ retrieval/impact on a real nats-server): a name that is not UTF-8, NUL bytes, a 5 MB line, a
200,000-line file, 1,200 nested definitions, 2,000-deep brackets, symlink loops, a FIFO and a
mode-000 file (bench/reliability/hostile_tree.py). The scan completes, each file is indexed or
listed as skipped with its reason, no service died, and an ordinary file in the same tree is
searchable — as are the outer definitions of the deep nesting.

A file deleted mid-scan is not here: nothing makes its timing deterministic through the stack;
the scanner reports a file that vanishes between listing and reading as unreadable, and
`make reliability` exercises it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from locus_up import run_locus, start_locus_up, stop_locus_up
from mesh_access import gateway_channel, internal_channel, service_token_of

from locus.v1 import common_pb2, gateway_pb2_grpc, ingestion_pb2, ingestion_pb2_grpc, retrieval_pb2

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "bench" / "reliability"))
from hostile_tree import NORMAL_FILE, NORMAL_SYMBOL, build_hostile_tree  # noqa: E402

RUNS_AS_ROOT = os.geteuid() == 0
# What each hostile file must end as: a skip reason, or "indexed".
EXPECTED = {
    NORMAL_FILE: "indexed",
    "name-\\xff\\xfe-not-utf8.py": "undecodable",
    "nul_bytes.py": "binary",
    "one_long_line.js": "oversize",
    "many_lines.py": "indexed",
    "deep_definitions.py": "indexed",
    "deep_brackets.py": "indexed",
    "loop_a.py": "unreadable",
    "loop_b.py": "unreadable",
    "self_loop.py": "unreadable",
    "named_pipe.py": "unreadable",
    # chmod 000 does not stop root: then it is read and indexed like any file.
    "unreadable.py": "indexed" if RUNS_AS_ROOT else "unreadable",
}


@dataclass
class Scanned:
    environment: dict[str, str]
    data_dir: Path
    built: dict[str, str]
    job: dict[str, Any]

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.data_dir / "stack.json").read_text())
        return data


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scanned]:
    root = tmp_path_factory.mktemp("hostile")
    tree = root / "allowed" / "hostile"
    built = build_hostile_tree(tree)
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {
        "LOCUS_HOME": str(root / "home"),
        "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false",
    }
    process = start_locus_up(root, root / "allowed", environment)
    try:
        assert run_locus(environment, "project", "create", "hostile").returncode == 0
        added = run_locus(environment, "source", "add", "hostile", str(tree))
        assert added.returncode == 0, added.stderr
        scan = run_locus(environment, "scan", "hostile", "--wait", "--timeout", "480", "--json")
        assert scan.stdout, scan.stderr
        yield Scanned(environment, root / "data", built, json.loads(scan.stdout))
    finally:
        stop_locus_up(process)
        (tree / "unreadable.py").chmod(0o644)  # so the temporary directory can be removed


def outcomes(scanned: Scanned) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Indexed paths → language, and skipped paths → (reason, detail), from ingestion."""
    indexed: dict[str, str] = {}
    skipped: dict[str, tuple[str, str]] = {}
    state = scanned.state()
    with internal_channel(state["ingestion_addr"], service_token_of(state)) as channel:
        ingestion = ingestion_pb2_grpc.IngestionServiceStub(channel)
        token = ""
        while True:
            page = ingestion.ListFiles(
                ingestion_pb2.ListFilesRequest(
                    project_id="hostile", page=common_pb2.PageRequest(page_token=token)
                ),
                timeout=30,
            )
            indexed |= {file.relative_path: file.language for file in page.files}
            if not (token := page.next_page_token):
                break
        while True:
            skip_page = ingestion.ListSkippedFiles(
                ingestion_pb2.ListSkippedFilesRequest(
                    job_id=scanned.job["job_id"], page=common_pb2.PageRequest(page_token=token)
                ),
                timeout=30,
            )
            skipped |= {f.relative_path: (f.reason, f.detail) for f in skip_page.files}
            if not (token := skip_page.next_page_token):
                break
    return indexed, skipped


def test_the_scan_of_a_hostile_tree_completes(scanned: Scanned) -> None:
    job = scanned.job
    assert job["state"] == "completed", job
    assert job["error"] == ""
    assert job["stats"]["files_failed"] == 0, job["stats"]
    assert sorted(scanned.built) == sorted(EXPECTED)


def test_every_hostile_file_is_indexed_or_skipped_with_its_reason(scanned: Scanned) -> None:
    indexed, skipped = outcomes(scanned)
    found: dict[str, str] = {}
    for path in scanned.built:
        assert not (path in indexed and path in skipped), path
        if path in skipped:
            reason, detail = skipped[path]
            assert detail, f"{path} skipped without a detail"
            found[path] = reason
        else:
            found[path] = "indexed" if path in indexed else "neither indexed nor skipped"
    assert found == EXPECTED
    assert set(indexed) | set(skipped) == set(scanned.built)  # nothing listed that was not built
    assert "Too many levels of symbolic links" in skipped["loop_a.py"][1]
    assert "FIFO" in skipped["named_pipe.py"][1]


def test_no_service_died(scanned: Scanned) -> None:
    services = scanned.state()["services"]
    assert {name: service["restarts"] for name, service in services.items()} == {
        name: 0 for name in services
    }
    status = run_locus(scanned.environment, "status", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert json.loads(status.stdout)["healthy"] is True


def test_the_ordinary_file_and_the_outer_deep_definitions_are_searchable(
    scanned: Scanned,
) -> None:
    symbols = run_locus(scanned.environment, "symbols", "hostile", NORMAL_SYMBOL, "--json")
    assert symbols.returncode == 0, symbols.stderr
    assert [s["qualified_name"] for s in json.loads(symbols.stdout)["symbols"]] == [
        f"normal.ledger.{NORMAL_SYMBOL}"
    ]
    outer = run_locus(scanned.environment, "symbols", "hostile", "level_0", "--exact", "--json")
    assert outer.returncode == 0, outer.stderr
    assert [s["qualified_name"] for s in json.loads(outer.stdout)["symbols"]] == [
        "deep_definitions.level_0"
    ]
    with gateway_channel(scanned.state()["gateway_addr"], scanned.state()) as channel:
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        found = gateway.Search(
            retrieval_pb2.SearchRequest(
                query="reconcile hostile ledger totals",
                mode=retrieval_pb2.SEARCH_MODE_BM25,
                filters=retrieval_pb2.SearchFilters(project_id="hostile"),
                top_k=5,
            ),
            timeout=60,
        )
    assert found.hits, "no hit for the ordinary file"
    assert found.hits[0].chunk.location.relative_path == NORMAL_FILE
