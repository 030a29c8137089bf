"""The MCP server (services/mcp) in front of a real stack: a real MCP client (the SDK's
ClientSession) over Streamable HTTP to ``python -m locus.mcp`` and over stdio to ``locus mcp``,
every tool called on the scanned sample project and checked by content, every result labelled
with its project; scoped calls over two projects of a three-project system, impact included,
label each item with the right project and return nothing of the third; a bad or missing
credential gives the gateway's UNAUTHENTICATED as a tool error; one trace with one request ID
spans the MCP tool call and the gateway's work; a gateway serving TLS is reached with the
stack's LOCUS_TLS_* files, and without them (or with another CA's) the error says why."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import httpx2
import pytest
from certificates import make_mesh_certificates
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.rpc import MeshCredentials, TlsMaterial
from locus.rpc.bearer import bearer_interceptors
from locus.telemetry import REQUEST_ID_ATTRIBUTE
from locus.v1 import gateway_pb2_grpc
from locus.v1.ingestion_pb2 import CreateProjectRequest, GetProjectRequest

pytestmark = pytest.mark.integration

TOOLS = {
    "list_projects",
    "locate",
    "impact",
    "symbol_impact",
    "search",
    "find_symbols",
    "get_symbol",
    "read_file",
    "ask",
}
LOCUS = Path(sys.executable).with_name("locus")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthz(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


def _healthz_reply(mcp_url: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of the /healthz beside an MCP endpoint."""
    url = mcp_url.removesuffix("/mcp") + "/healthz"
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return int(reply.status), json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return int(error.code), json.loads(error.read())


@asynccontextmanager
async def mcp_http_server(
    gateway_address: str,
    work_dir: Path,
    environment: dict[str, str] | None = None,
    *,
    wait_for_gateway: bool = True,
) -> AsyncIterator[tuple[str, Path]]:
    """``python -m locus.mcp`` on a free port, with ``environment`` on top of this process's
    (without its LOCUS_API_KEY and LOCUS_TLS_*): (its MCP URL, its traces file); stopped (and
    its spans flushed) when the block ends. Waits (without blocking the loop, which serves the
    in-process gateway) until /healthz says the gateway serves, or with ``wait_for_gateway``
    false until /healthz answers at all."""
    port = _free_port()
    await asyncio.to_thread(work_dir.mkdir, parents=True, exist_ok=True)
    traces = work_dir / "mcp-traces.jsonl"
    inherited = {
        key: value
        for key, value in os.environ.items()
        if key != "LOCUS_API_KEY" and not key.startswith("LOCUS_TLS_")
    }
    environment = {
        **inherited,
        **(environment or {}),
        "LOCUS_MCP_GATEWAY_ADDR": gateway_address,
        "LOCUS_MCP_HTTP_PORT": str(port),
        "LOCUS_TRACES_FILE": str(traces),
    }
    ready = {200} if wait_for_gateway else {200, 503}
    log_path = work_dir / "mcp.log"
    with log_path.open("wb") as log:
        process = await asyncio.to_thread(
            subprocess.Popen,
            [sys.executable, "-m", "locus.mcp"],
            env=environment,
            stdout=log,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 60
        while await asyncio.to_thread(_healthz, f"http://127.0.0.1:{port}/healthz") not in ready:
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"no /healthz {ready}: {log_path.read_text()}"
            await asyncio.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp", traces
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 20)


@asynccontextmanager
async def http_session(url: str, credential: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {credential}"} if credential else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(300, connect=10)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(gateway_address: str, credential: str) -> AsyncIterator[ClientSession]:
    """``locus mcp --gateway ADDRESS`` spawned as a coding agent would, with LOCUS_API_KEY."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LOCUS_API_KEY", "LOCUS_MCP_"))
    }
    parameters = StdioServerParameters(
        command=str(LOCUS),
        args=["mcp", "--gateway", gateway_address],
        env={**environment, "LOCUS_API_KEY": credential, "LOCUS_HOME": "/nonexistent"},
    )
    async with (
        stdio_client(parameters) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result: Any = await session.call_tool(tool, arguments)
    text = " ".join(getattr(part, "text", "") for part in result.content)
    assert not result.is_error, f"{tool} failed: {text}"
    structured: dict[str, Any] = result.structured_content
    return structured


async def tool_error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The gateway's status and message from a failed tool call (the SDK puts "Error
    executing tool <name>: " before them)."""
    result: Any = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} did not fail: {result.structured_content}"
    text = " ".join(getattr(part, "text", "") for part in result.content)
    return text.removeprefix(f"Error executing tool {tool}: ")


async def scan(stack: Any, gateway: Any, sample_tree: Path) -> str:
    stack.require("ingestion", "ast", "retrieval", "impact", "answer")
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.error == "", job.error
    return str(project.name)


def labels(result: Any) -> set[tuple[str, str]]:
    """The (project_id, project) pair of every labelled item anywhere in a tool's result."""
    found: set[tuple[str, str]] = set()
    if isinstance(result, dict):
        if "project_id" in result:
            found.add((result["project_id"], result["project"]))
        for value in result.values():
            found |= labels(value)
    elif isinstance(result, list):
        for value in result:
            found |= labels(value)
    return found


async def test_every_tool_over_streamable_http_in_one_trace(
    stack: Any, start_gateway: Any, sample_tree: Path, tmp_path: Path
) -> None:
    exporter = InMemorySpanExporter()
    gateway = await start_gateway(exporters=[exporter])
    project = await scan(stack, gateway, sample_tree)
    project_id = (await gateway.stub.GetProject(GetProjectRequest(project_id=project))).project_id
    label = {(project_id, project)}
    payments = (sample_tree / "src/shop/payments.py").read_text().splitlines()

    async with mcp_http_server(gateway.runtime.address, tmp_path) as (url, traces_file):
        async with http_session(url, gateway.admin_key) as session:
            listed = await session.list_tools()
            assert {tool.name for tool in listed.tools} == TOOLS
            assert all(tool.output_schema for tool in listed.tools)
            locate_schema = next(t for t in listed.tools if t.name == "locate").input_schema
            assert set(locate_schema["required"]) == {"question"}  # project, or scope
            assert {"project", "scope"} <= set(locate_schema["properties"])

            projects = await call(session, "list_projects")
            assert project in {p["name"] for p in projects["projects"]}

            located = await call(
                session, "locate", project=project, question="where is the card charged?"
            )
            assert located["files"][0]["path"] == "src/shop/payments.py"
            assert "charge_card" in {s["name"] for s in located["symbols"]}
            assert located["symbols"]
            assert labels(located) == label  # every file and symbol names its project

            scoped = await call(
                session,
                "locate",
                scope={"projects": [project]},
                question="where is the card charged?",
            )
            assert scoped["files"][0]["path"] == "src/shop/payments.py"
            assert scoped["files"][0]["project"] == project
            assert labels(scoped) == label

            searched = await call(session, "search", project=project, query="charge card payment")
            assert "src/shop/payments.py" in {hit["path"] for hit in searched["hits"]}
            assert labels(searched) == label
            # Each hit can be followed (get_symbol, read_file) and its lexical evidence read;
            # the search says which request it was and what answered it.
            hit = next(h for h in searched["hits"] if h["path"] == "src/shop/payments.py")
            assert hit["symbol_node_id"]
            assert hit["file_id"]
            assert hit["lexical_rank"] >= 1
            assert hit["lexical_score"] > 0
            assert searched["request_id"]
            assert searched["mode"] == "hybrid"

            found = await call(
                session, "find_symbols", project=project, name="place_order", exact=True
            )
            (place_order,) = found["symbols"]
            assert place_order["kind"] == "method"
            assert place_order["path"] == "src/shop/orders.py"
            assert labels(found) == label
            # The end of a qualified name counts, as for `locus symbols --exact`; a path prefix
            # reads as Locate reads it (`./src/`).
            by_end = await call(
                session,
                "find_symbols",
                project=project,
                name="OrderService.place_order",
                exact=True,
                path_prefix="./src/",
            )
            assert [s["node_id"] for s in by_end["symbols"]] == [place_order["node_id"]]

            details = await call(session, "get_symbol", node_id=place_order["node_id"])
            assert details["symbol"]["qualified_name"].endswith("OrderService.place_order")
            assert [p["name"] for p in details["parents"]][:1] == ["OrderService"]
            calls = {r["target_name"] for r in details["outgoing"] if r["kind"] == "calls"}
            assert "charge_card" in calls
            assert labels(details) == label

            read = await call(
                session,
                "read_file",
                project=project,
                path="src/shop/payments.py",
                start_line=8,
                end_line=10,
            )
            assert [line["number"] for line in read["lines"]] == [8, 9, 10]
            assert [line["text"] for line in read["lines"]] == payments[7:10]
            assert read["total_lines"] == len(payments)
            assert read["truncated"] is False
            assert (read["project_id"], read["project"]) == (project_id, project)

            impact = await call(session, "impact", project=project, question="charge_card", depth=2)
            (project_impact,) = impact["projects"]
            assert (project_impact["project_id"], project_impact["project"]) == (
                project_id,
                project,
            )
            impacted = {s["symbol"]["name"] for s in project_impact["impacted_symbols"]}
            impacted_files = {f["path"] for f in project_impact["impacted_files"]}
            assert "place_order" in impacted or "src/shop/orders.py" in impacted_files
            assert labels(impact) == label

            charge = await call(
                session, "find_symbols", project=project, name="charge_card", exact=True
            )
            walked = await call(
                session, "symbol_impact", node_id=charge["symbols"][0]["node_id"], depth=2
            )
            assert walked["symbol"]["name"] == "charge_card"
            callers = {s["symbol"]["name"]: s for s in walked["impacted_symbols"]}
            assert callers["place_order"]["distance"] == 1
            assert "src/shop/orders.py" in {f["path"] for f in walked["impacted_files"]}
            assert labels(walked) == label

            answer = await call(
                session, "ask", project=project, question="where is the card charged?"
            )
            assert answer["status"] == "finished"
            assert answer["answer"]
            assert "src/shop/payments.py" in {c["path"] for c in answer["citations"]}
            assert all(snippet["lines"] for snippet in answer["snippets"])
            assert labels(answer) == label  # citations and snippets

            # What an agent gets wrong is answered with a status and what to give instead.
            for tool, arguments, says in [
                ("locate", {"question": "x"}, "give project or scope, exactly one of them"),
                ("locate", {"question": "x", "scope": {}}, "scope names nothing"),
                ("find_symbols", {"project": project, "name": "   "}, "name must name"),
            ]:
                error = await tool_error(session, tool, **arguments)
                assert error.startswith("INVALID_ARGUMENT: "), error
                assert says in error

        async with http_session(url, "lk_0000_not-a-key") as session:
            assert (await tool_error(session, "list_projects")).startswith("UNAUTHENTICATED: ")
        async with http_session(url, None) as session:
            assert (await tool_error(session, "locate", project=project, question="x")).startswith(
                "UNAUTHENTICATED: "
            )

    log = (tmp_path / "mcp.log").read_text()
    assert gateway.admin_key not in log
    assert "not-a-key" not in log
    # One trace: the MCP tool call's span and the gateway's spans, with one request ID.
    request_id = located["request_id"]
    mcp_spans = [json.loads(line) for line in traces_file.read_text().splitlines()]
    (tool_span,) = [
        s
        for s in mcp_spans
        if s["name"] == "mcp.tool locate"
        and s["attributes"].get(REQUEST_ID_ATTRIBUTE) == request_id
    ]
    trace_id = int(tool_span["context"]["trace_id"], 16)
    gateway_spans = [
        s
        for s in exporter.get_finished_spans()
        if s.attributes.get(REQUEST_ID_ATTRIBUTE) == request_id
    ]
    assert gateway_spans, "the gateway recorded no span with the MCP call's request id"
    assert {s.context.trace_id for s in gateway_spans} == {trace_id}
    assert any(s.name.endswith("Gateway/Locate") for s in gateway_spans)


async def test_stdio_through_locus_mcp(stack: Any, gateway: Any, sample_tree: Path) -> None:
    project = await scan(stack, gateway, sample_tree)
    payments = (sample_tree / "src/shop/payments.py").read_text().splitlines()
    async with stdio_session(gateway.runtime.address, gateway.admin_key) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS
        located = await call(
            session, "locate", project=project, question="where is the card charged?"
        )
        assert located["files"][0]["path"] == "src/shop/payments.py"
        read = await call(session, "read_file", project=project, path="src/shop/payments.py")
        assert [line["text"] for line in read["lines"]] == payments
    async with stdio_session(gateway.runtime.address, "lk_0000_not-a-key") as session:
        assert (await tool_error(session, "list_projects")).startswith("UNAUTHENTICATED: ")


async def test_scoped_calls_name_each_results_project_and_impact_stays_in_the_scope(
    stack: Any, start_gateway: Any, system: dict[str, Any]
) -> None:
    stack.require("impact", "answer")
    # Impact walks from each project's best symbol alone: in projects this small, the default
    # (five seeds) would take every symbol as a seed and leave nothing impacted.
    gateway = await start_gateway(settings_update={"impact_seed_symbols": 1})
    projects = system["projects"]
    asked = [projects["orders"], projects["telescope"]]
    named = {(p.project_id, p.name) for p in asked}
    keys = {p.project_id: key for key, p in projects.items()}
    outside = projects["invoices"]
    scope = {"projects": [p.name for p in asked]}
    question = "where is the distance to a star computed from its parallax?"

    async with stdio_session(gateway.runtime.address, gateway.admin_key) as session:
        located = await call(session, "locate", scope=scope, question=question)
        assert located["files"][0]["path"] == "src/telescope/parallax.py"
        assert located["files"][0]["project_id"] == projects["telescope"].project_id
        # Each project of the scope, with how many of the files are its own.
        assert {(p["project_id"], p["project"]) for p in located["projects"]} == named
        assert sum(p["files"] for p in located["projects"]) == len(located["files"])
        searched = await call(session, "search", scope=scope, query="parallax distance star")
        answer = await call(session, "ask", scope=scope, question=question)
        impact = await call(session, "impact", scope=scope, question=question, depth=2)

    # Every item names its project (id and name), one of the two asked, and it is the right one.
    for result, items in [
        (located, located["files"] + located["symbols"]),
        (searched, searched["hits"]),
        (answer, answer["citations"] + answer["snippets"]),
    ]:
        assert items, result
        assert labels(result) <= named, result
        for item in items:
            assert item["path"].startswith(f"src/{keys[item['project_id']]}/"), item
    assert "src/telescope/parallax.py" in {c["path"] for c in answer["citations"]}

    # Impact: one entry per project of the scope, each labelled, nothing from another project.
    assert {(p["project_id"], p["project"]) for p in impact["projects"]} == named
    assert labels(impact) <= named
    for entry in impact["projects"]:
        key = keys[entry["project_id"]]
        assert entry["snapshot_id"]
        assert not entry["skipped"]
        paths = [s["path"] for s in entry["located"]]
        paths += [s["symbol"]["path"] for s in entry["impacted_symbols"]]
        paths += [f["path"] for f in entry["impacted_files"]]
        assert all(path.startswith(f"src/{key}/") for path in paths), entry
    telescope = next(p for p in impact["projects"] if p["project"] == projects["telescope"].name)
    assert "parallax_distance_parsecs" in {s["name"] for s in telescope["located"]}
    # print_report (src/telescope/report.py) calls it.
    assert "print_report" in {s["symbol"]["name"] for s in telescope["impacted_symbols"]}
    assert "src/telescope/report.py" in {f["path"] for f in telescope["impacted_files"]}
    everything = json.dumps([located, searched, answer, impact])
    assert outside.project_id not in everything
    assert outside.name not in everything
    assert "src/invoices/" not in everything


async def test_the_mcp_server_calls_a_gateway_serving_tls(
    stack: Any, start_gateway: Any, tmp_path: Path
) -> None:
    """MCP → gateway over TLS → ingestion over mTLS, with the stack's LOCUS_TLS_* files; a
    server without them, or with another CA's, says why it cannot reach the gateway."""
    stack.require("ingestion")
    certificates = make_mesh_certificates(tmp_path / "certificates")
    tls = TlsMaterial.from_files(
        certificates.service.cert_file,
        certificates.service.key_file,
        certificates.service.ca_file,
    )
    suffix = uuid.uuid4().hex[:8]
    ingestion = stack.start_service(
        "ingestion",
        # Its own stream: it must not take the shared stack's events.
        environment={
            **certificates.service.environment(),
            "LOCUS_STREAM_NAME": f"LOCUS_TLS{suffix.upper()}",
            "LOCUS_SUBJECT_PREFIX": f"locus.tls{suffix}.v1",
        },
        mesh=MeshCredentials("", tls),
    )
    try:
        gateway = await start_gateway(
            settings_update={
                "tls_cert_file": certificates.service.cert_file,
                "tls_key_file": certificates.service.key_file,
                "tls_ca_file": certificates.service.ca_file,
            },
            ingestion=ingestion.address,
        )
        async with grpc.aio.secure_channel(
            gateway.runtime.address,
            tls.channel_credentials(),
            interceptors=bearer_interceptors(gateway.admin_key),
        ) as channel:
            created = await gateway_pb2_grpc.GatewayStub(channel).CreateProject(
                CreateProjectRequest(name=f"tls-{suffix}")
            )

        with_tls = certificates.service.environment()
        async with (
            mcp_http_server(gateway.runtime.address, tmp_path / "tls", with_tls) as (url, _),
            http_session(url, gateway.admin_key) as session,
        ):
            listed = await call(session, "list_projects")
        assert created.name in {p["name"] for p in listed["projects"]}

        for name, environment, why in [
            ("plaintext", {}, "in plaintext; a gateway serving TLS needs"),
            ("rogue", certificates.rogue.environment(), "CERTIFICATE_VERIFY_FAILED"),
        ]:
            async with mcp_http_server(
                gateway.runtime.address, tmp_path / name, environment, wait_for_gateway=False
            ) as (url, _):
                status, body = await asyncio.to_thread(_healthz_reply, url)
                assert status == 503, body
                assert body["error"].startswith("UNAVAILABLE: "), body
                assert why in body["error"], body
                async with http_session(url, gateway.admin_key) as session:
                    error = await tool_error(session, "list_projects")
                assert error.startswith("UNAVAILABLE: "), error
                assert f"gateway {gateway.runtime.address}" in error
                assert "LOCUS_TLS_CA_FILE" in error
    finally:
        ingestion.stop()


def test_a_certificate_without_its_ca_stops_the_server_at_start(tmp_path: Path) -> None:
    certificates = make_mesh_certificates(tmp_path / "certificates")
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LOCUS_")},
        **certificates.service.environment(),
    }
    environment.pop("LOCUS_TLS_CA_FILE")
    finished = subprocess.run(
        [sys.executable, "-m", "locus.mcp", "--stdio"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert finished.returncode == 2, finished.stderr
    assert "LOCUS_TLS_CA_FILE" in finished.stderr
    assert "mTLS needs the certificate, its key and the CA" in finished.stderr
