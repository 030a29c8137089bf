"""Every service of a `locus up` stack serves Prometheus metrics on its own port, and they move
with the work: a scan moves the consumers' counters and the scan/indexing progress of each
stage, the vectors lane counts what it embedded, Locate and Ask move the RPC counters of every
service they cross, a refused request is counted under its status code, and each durable
consumer's backlog is reported."""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from locus_up import run_locus, start_locus_up, stop_locus_up
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE_PACKAGE = REPOSITORY / "tests" / "unit" / "ast" / "fixtures" / "uploads"
SERVICES = ("gateway", "ingestion", "ast", "retrieval", "impact", "answer")

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(address: str) -> Samples:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, got), v in samples.items() if n == name and wanted <= got)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("metrics")
    shutil.copytree(FIXTURE_PACKAGE, root / "allowed" / "shop" / "uploads")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment["LOCUS_HOME"] = str(root / "home")
    process = start_locus_up(root, root / "allowed", environment)
    environment["SHOP"] = str(root / "allowed" / "shop")
    environment["STATE"] = str(root / "data" / "stack.json")
    yield environment
    stop_locus_up(process)


def test_every_service_exports_metrics_that_move_with_the_work(stack: dict[str, str]) -> None:
    environment = stack
    status = json.loads(run_locus(environment, "status", "--json").stdout)
    addresses = {row["name"]: row.get("metrics") for row in status["services"]}
    assert all(addresses[name] for name in SERVICES), addresses
    before = {name: scrape(addresses[name]) for name in SERVICES}

    assert run_locus(environment, "project", "create", "shop").returncode == 0
    assert run_locus(environment, "source", "add", "shop", environment["SHOP"]).returncode == 0
    scanned = run_locus(environment, "scan", "shop", "--wait", "--embedded", "--json")
    assert scanned.returncode == 0, scanned.stderr
    located = run_locus(environment, "locate", "shop", "where is the upload retry limit?")
    assert located.returncode == 0, located.stderr
    asked = run_locus(environment, "ask", "shop", "how are failed uploads retried?")
    assert asked.returncode == 0, asked.stderr
    refused = run_locus(environment, "locate", "no-such-project", "anything")
    assert refused.returncode != 0
    after = {name: scrape(addresses[name]) for name in SERVICES}

    def moved(service: str, name: str, **labels: str) -> float:
        return total(after[service], name, **labels) - total(before[service], name, **labels)

    # RED of the RPCs Locate and Ask cross, service by service.
    assert moved("gateway", "locus_rpc_requests_total", method="Locate", code="OK") >= 1
    assert moved("gateway", "locus_rpc_requests_total", method="Ask", code="OK") >= 1
    assert moved("gateway", "locus_rpc_requests_total", code="NOT_FOUND") >= 1  # the refusal
    assert moved("gateway", "locus_rpc_duration_seconds_count", method="Locate") >= 2
    assert moved("retrieval", "locus_rpc_requests_total", method="Search", code="OK") >= 2
    assert moved("ast", "locus_rpc_requests_total", code="OK") >= 2
    assert moved("impact", "locus_rpc_requests_total", method="Compute", code="OK") >= 1
    assert moved("answer", "locus_rpc_requests_total", method="Generate", code="OK") >= 1
    assert moved("ingestion", "locus_rpc_requests_total", method="StartScan", code="OK") >= 1

    # The consumers of the scan's events, and what each stage made of the 4 files.
    for service in ("ingestion", "ast", "retrieval", "impact"):
        assert moved(service, "locus_events_consumed_total", outcome="ok") >= 1, service
        assert moved(service, "locus_event_handling_seconds_count") >= 1, service
    assert moved("ingestion", "locus_scan_files_total", outcome="added") == 4
    assert moved("ingestion", "locus_scans_total", level="searchable") >= 1
    for stage in ("ast", "retrieval", "impact"):
        assert moved(stage, "locus_indexed_files_total", stage=stage, status="indexed") == 4
    assert moved("retrieval", "locus_indexed_files_total", stage="vectors", status="indexed") == 4
    assert moved("retrieval", "locus_embedded_chunks_total", source="computed") >= 4
    assert moved("retrieval", "locus_cache_lookups_total", cache="embeddings", result="miss") >= 4

    # Each durable consumer's backlog is reported (drained once the scan is embedded).
    backlog = [
        (service, dict(labels))
        for service in ("ingestion", "ast", "retrieval", "impact")
        for (name, labels), _ in after[service].items()
        if name == "locus_consumer_pending_messages"
    ]
    assert {service for service, _ in backlog} == {"ingestion", "ast", "retrieval", "impact"}
    vectors_lane = [labels for service, labels in backlog if service == "retrieval"]
    assert any(labels["subject"].endswith("vectors.requested.source") for labels in vectors_lane)
