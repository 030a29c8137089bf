"""The whole stack as separate processes (`locus up`), exporting spans over OTLP to a real
receiver: one scan and one question each form ONE trace whose edges cross every service they
touch, with the CLI's request ID on every span — the trace an SRE follows in a dashboard."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from locus_up import LOCUS, start_locus_up, stop_locus_up
from mesh_access import gateway_channel
from required import unavailable

from locus.v1 import gateway_pb2_grpc, ingestion_pb2

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE_PACKAGE = REPOSITORY / "tests" / "unit" / "ast" / "fixtures" / "uploads"
ALL_SERVICES = ("ingestion", "ast", "retrieval", "impact", "answer", "gateway")


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    environment: dict[str, str]
    repository: Path
    log: Path

    def locus(self, *arguments: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(LOCUS), *arguments],
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert result.returncode == 0, f"locus {arguments}: {result.stdout}\n{result.stderr}"
        return result


def installed(service: str) -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", f"import locus.{service}.__main__"], capture_output=True, check=False
    )
    return probe.returncode == 0


@pytest.fixture(scope="module")
def otlp_receiver(module_otlp_sink: Any) -> Any:
    return module_otlp_sink


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, otlp_receiver: Any) -> Iterator[Stack]:
    missing = [s for s in ALL_SERVICES if not installed(s)]
    if missing:
        unavailable(f"the services {', '.join(missing)}", "not installed (run make setup)")
    root = tmp_path_factory.mktemp("e2e")
    repository = root / "allowed" / "shop"
    shutil.copytree(FIXTURE_PACKAGE, repository / "uploads")
    environment = (
        {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
        | otlp_receiver.environment()
        | {"LOCUS_HOME": str(root / "home")}
    )
    process = start_locus_up(root, root / "allowed", environment)
    yield Stack(process, environment, repository, root / "up.log")
    stop_locus_up(process)


def trace_of(receiver: Any, command: str, within: float = 30.0) -> tuple[str, list[dict[str, Any]]]:
    """The spans of the trace rooted at the CLI's `locus <command>` span, once they stop growing."""
    deadline = time.monotonic() + within
    previous = -1
    while time.monotonic() < deadline:
        spans = receiver.snapshot()
        roots = [s for s in spans if s["service"] == "cli" and s["name"] == f"locus {command}"]
        if roots:
            trace_id = roots[-1]["trace_id"]
            members = [s for s in spans if s["trace_id"] == trace_id]
            if len(members) == previous:
                return trace_id, members
            previous = len(members)
        time.sleep(1.0)
    raise AssertionError(f"no complete trace for `locus {command}`")


def test_a_scan_is_one_trace_from_the_cli_through_ingestion_nats_and_ast(
    stack: Stack, otlp_receiver: Any
) -> None:
    stack.locus("project", "create", "shop")
    stack.locus("source", "add", "shop", str(stack.repository))
    scanned = json.loads(stack.locus("scan", "shop", "--wait", "--embedded", "--json").stdout)
    assert scanned["level"] == "embedded"
    trace_id, spans = trace_of(otlp_receiver, "scan")
    edges = otlp_receiver.edges(trace_id)
    # The vectors lane (vectors.requested over NATS, inside retrieval) is in the same trace.
    lane_spans = [s for s in spans if s["name"] == "retrieval-vectors process batch"]
    assert lane_spans
    assert {s["service"] for s in lane_spans} == {"retrieval"}
    assert ("cli", "gateway") in edges
    assert ("gateway", "ingestion") in edges
    assert ("ingestion", "ast") in edges  # files.changed over NATS
    assert ("ast", "ingestion") in edges  # GetFileContent over gRPC
    assert ("ast", "retrieval") in edges  # files.parsed over NATS
    assert ("ast", "impact") in edges
    request_ids = {s["attributes"].get("locus.request_id") for s in spans}
    assert len(request_ids) == 1, request_ids
    assert None not in request_ids


def test_an_ask_is_one_trace_across_every_service_with_the_request_id(
    stack: Stack, otlp_receiver: Any
) -> None:
    result = stack.locus("ask", "shop", "where is the retry limit for uploads enforced?")
    assert "policy.py" in result.stdout
    trace_id, spans = trace_of(otlp_receiver, "ask")
    edges = otlp_receiver.edges(trace_id)
    for downstream in ("retrieval", "ast", "impact", "answer"):
        assert ("gateway", downstream) in edges, (downstream, edges)
    assert ("cli", "gateway") in edges
    # The ranking asked ingestion for the candidates' change history, in the same trace.
    assert any(
        s["service"] == "ingestion" and s["name"].endswith("/ScoreFileHistory") for s in spans
    ), sorted({(s["service"], s["name"]) for s in spans})
    request_ids = {s["attributes"].get("locus.request_id") for s in spans}
    assert len(request_ids) == 1, request_ids
    assert None not in request_ids
    requests = json.loads(stack.locus("requests", "shop", "--json").stdout)
    persisted = json.dumps(requests)
    assert next(iter(request_ids)) in persisted  # the gateway stored the same request ID


def locbench_rank(stack: Stack, query: dict[str, Any], timings: Path) -> dict[str, Any]:
    result = subprocess.run(
        [str(LOCUS), "locbench-rank", "--timings", str(timings)],
        input=json.dumps(query),
        env=stack.environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    ranked: dict[str, Any] = json.loads(result.stdout)  # stdout holds exactly the JSON answer
    return ranked


def test_locbench_rank_registers_a_repository_once_and_rescans_it_incrementally(
    stack: Stack, otlp_receiver: Any, tmp_path: Path
) -> None:
    repository = stack.repository.parent / "bench-uploads"
    shutil.copytree(FIXTURE_PACKAGE, repository / "uploads")
    timings = tmp_path / "timings.jsonl"
    query = {
        "instance_id": "acme__uploads-1",
        "repo": "acme/uploads",
        "base_commit": "0" * 40,
        "repo_path": str(repository),
        "problem_statement": "Uploads retry forever: `enforce_retry_limit` lets `attempts` "
        "exceed RETRY_LIMIT.",
        "max_files": 5,
        "max_functions": 5,
    }
    first = locbench_rank(stack, query, timings)
    assert first["files"][0] == "uploads/policy.py", first
    assert "uploads/policy.py::enforce_retry_limit" in first["functions"][:3], first
    assert all("::" in f and f.split("::")[0] in first["files"] for f in first["functions"])

    policy = repository / "uploads" / "policy.py"
    policy.write_text(
        policy.read_text() + "\n\ndef jitter_for(attempt: int) -> float:\n    return 0.1\n"
    )
    second = locbench_rank(stack, query | {"instance_id": "acme__uploads-2"}, timings)
    assert second["files"][0] == "uploads/policy.py", second

    runs = [json.loads(line) for line in timings.read_text().splitlines()]
    assert [r["instance_id"] for r in runs] == ["acme__uploads-1", "acme__uploads-2"]
    assert {r["project"] for r in runs} == {"locbench-acme-uploads"}  # registered once
    assert runs[0]["files_changed"] == 4
    assert runs[1]["files_changed"] == 1  # only the edited file was indexed again
    projects = json.loads(stack.locus("project", "list", "--json").stdout)["projects"]
    assert [p["name"] for p in projects].count("locbench-acme-uploads") == 1

    trace_id, spans = trace_of(otlp_receiver, "locbench-rank")
    edges = otlp_receiver.edges(trace_id)
    for downstream in ("ingestion", "retrieval", "ast"):
        assert ("gateway", downstream) in edges, (downstream, edges)
    request_ids = {s["attributes"].get("locus.request_id") for s in spans}
    assert len(request_ids) == 1, request_ids
    assert runs[1]["request_id"] in request_ids


def test_deleting_a_project_is_one_trace_from_the_gateway_through_nats_to_every_consumer(
    stack: Stack, otlp_receiver: Any
) -> None:
    tree = stack.repository.parent / "doomed"
    (tree / "doomed").mkdir(parents=True)
    (tree / "doomed" / "only.py").write_text("def lonely() -> int:\n    return 1\n")
    stack.locus("project", "create", "doomed")
    stack.locus("source", "add", "doomed", str(tree))
    stack.locus("scan", "doomed", "--wait", "--embedded", "--json")

    trace_id, request_id = uuid.uuid4().hex, f"delete-{uuid.uuid4().hex}"
    state = json.loads((stack.log.parent / "data" / "stack.json").read_text())
    with gateway_channel(state["gateway_addr"], state) as channel:
        deleted = gateway_pb2_grpc.GatewayStub(channel).DeleteProject(
            ingestion_pb2.DeleteProjectRequest(project_id="doomed"),
            metadata=(
                ("x-request-id", request_id),
                ("traceparent", f"00-{trace_id}-{uuid.uuid4().hex[:16]}-01"),
            ),
            timeout=60,
        )
    assert deleted.name == "doomed", deleted

    consumers = ("ast", "retrieval", "impact")

    def handled() -> list[dict[str, Any]]:
        """The consumers' spans of the project.deleted subject (only this test deletes one)."""
        return [
            s
            for s in otlp_receiver.snapshot()
            if s["service"] in consumers
            and "project.deleted" in " ".join([s["name"], *s["attributes"].values()])
        ]

    deadline = time.monotonic() + 60
    while {s["service"] for s in handled()} != set(consumers):
        assert time.monotonic() < deadline, f"not every consumer handled it: {handled()}"
        time.sleep(1.0)
    time.sleep(2.0)  # the rest of the trace's batches
    for service in consumers:
        seen = {
            (s["trace_id"], s["attributes"].get("locus.request_id"))
            for s in handled()
            if s["service"] == service
        }
        assert (trace_id, request_id) in seen, (service, trace_id, request_id, seen)
    spans = [s for s in otlp_receiver.snapshot() if s["trace_id"] == trace_id]
    edges = otlp_receiver.edges(trace_id)
    assert ("gateway", "ingestion") in edges, edges
    for service in consumers:
        assert ("ingestion", service) in edges, (service, edges)  # project.deleted over NATS
    assert {s["service"] for s in spans} >= {"gateway", "ingestion", *consumers}
    request_ids = {s["attributes"].get("locus.request_id") for s in spans}
    assert request_ids == {request_id}, request_ids
