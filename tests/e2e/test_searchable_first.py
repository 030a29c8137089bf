"""A project is answered as soon as it is searchable: with the vectors lane of the stack's
retrieval switched off, `locus up` makes no vectors, a scan is done at the searchable level
(no vectors pending, none claimed) and Locate finds the code."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from locus_up import run_locus, start_locus_up, stop_locus_up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE_PACKAGE = REPOSITORY / "tests" / "unit" / "ast" / "fixtures" / "uploads"


@pytest.fixture(scope="module")
def stack_without_vectors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("searchable-first")
    shutil.copytree(FIXTURE_PACKAGE, root / "allowed" / "shop" / "uploads")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment |= {
        "LOCUS_HOME": str(root / "home"),
        "LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED": "false",
    }
    process = start_locus_up(root, root / "allowed", environment)
    environment["SHOP"] = str(root / "allowed" / "shop")
    yield environment
    stop_locus_up(process)


def test_locate_answers_from_a_searchable_project_without_vectors(
    stack_without_vectors: dict[str, str],
) -> None:
    environment = stack_without_vectors
    assert run_locus(environment, "project", "create", "shop").returncode == 0
    assert run_locus(environment, "source", "add", "shop", environment["SHOP"]).returncode == 0

    scanned = run_locus(environment, "scan", "shop", "--wait", "--json")
    assert scanned.returncode == 0, scanned.stderr
    job = json.loads(scanned.stdout)
    assert job["state"] == "completed"
    assert job["level"] == "searchable"
    assert job["without_vectors"] is True
    assert job["pending_stages"] == []
    assert job["stats"]["files_indexed"] == 4
    assert job["stats"]["files_embedded"] == 0
    # Waiting for vectors that are never made ends at once, and says why.
    waited = run_locus(environment, "scan", "shop", "--wait", "--embedded", "--timeout", "60")
    assert waited.returncode == 0, waited.stderr
    assert "no vectors are made here" in waited.stdout

    located = run_locus(
        environment, "locate", "shop", "where is the retry limit for uploads enforced?", "--json"
    )
    assert located.returncode == 0, located.stderr
    files = [f["path"] for f in json.loads(located.stdout)["files"]]
    assert files[0] == "uploads/policy.py", files
