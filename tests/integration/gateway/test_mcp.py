"""The MCP server (services/mcp) in front of a real stack: a real MCP client (the SDK's
ClientSession) over Streamable HTTP to ``python -m locus.mcp`` and over stdio to ``locus mcp``,
every tool called on the scanned sample project and checked by content; a bad or missing
credential gives the gateway's UNAUTHENTICATED as a tool error; one trace with one request ID
spans the MCP tool call and the gateway's work."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.telemetry import REQUEST_ID_ATTRIBUTE

pytestmark = pytest.mark.integration

TOOLS = {
    "list_projects",
    "locate",
    "impact",
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


@asynccontextmanager
async def mcp_http_server(gateway_address: str, work_dir: Path) -> AsyncIterator[tuple[str, Path]]:
    """``python -m locus.mcp`` on a free port: (its MCP URL, its traces file); stopped (and
    its spans flushed) when the block ends. Waits without blocking the loop, which serves the
    in-process gateway."""
    port = _free_port()
    traces = work_dir / "mcp-traces.jsonl"
    environment = {
        **os.environ,
        "LOCUS_MCP_GATEWAY_ADDR": gateway_address,
        "LOCUS_MCP_HTTP_PORT": str(port),
        "LOCUS_TRACES_FILE": str(traces),
    }
    environment.pop("LOCUS_API_KEY", None)
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
        while await asyncio.to_thread(_healthz, f"http://127.0.0.1:{port}/healthz") != 200:
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"no /healthz 200: {log_path.read_text()}"
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


async def test_every_tool_over_streamable_http_in_one_trace(
    stack: Any, start_gateway: Any, sample_tree: Path, tmp_path: Path
) -> None:
    exporter = InMemorySpanExporter()
    gateway = await start_gateway(exporters=[exporter])
    project = await scan(stack, gateway, sample_tree)
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

            scoped = await call(
                session,
                "locate",
                scope={"projects": [project]},
                question="where is the card charged?",
            )
            assert scoped["files"][0]["path"] == "src/shop/payments.py"
            assert scoped["files"][0]["project"] == project

            searched = await call(session, "search", project=project, query="charge card payment")
            assert "src/shop/payments.py" in {hit["path"] for hit in searched["hits"]}

            found = await call(
                session, "find_symbols", project=project, name="place_order", exact=True
            )
            (place_order,) = found["symbols"]
            assert place_order["kind"] == "method"
            assert place_order["path"] == "src/shop/orders.py"

            details = await call(session, "get_symbol", node_id=place_order["node_id"])
            assert details["symbol"]["qualified_name"].endswith("OrderService.place_order")
            assert [p["name"] for p in details["parents"]][:1] == ["OrderService"]
            calls = {r["target_name"] for r in details["outgoing"] if r["kind"] == "calls"}
            assert "charge_card" in calls

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

            impact = await call(session, "impact", project=project, question="charge_card", depth=2)
            impacted = {s["symbol"]["name"] for s in impact["impacted_symbols"]}
            impacted_files = {f["path"] for f in impact["impacted_files"]}
            assert "place_order" in impacted or "src/shop/orders.py" in impacted_files

            answer = await call(
                session, "ask", project=project, question="where is the card charged?"
            )
            assert answer["status"] == "finished"
            assert answer["answer"]
            assert "src/shop/payments.py" in {c["path"] for c in answer["citations"]}
            assert all(snippet["lines"] for snippet in answer["snippets"])

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
