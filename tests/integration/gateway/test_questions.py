"""Locate and Ask through the real gateway: the status code of every way a question can be
wrong (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, UNAVAILABLE), with each request
recorded under its x-request-id whatever happened, and the trace continued."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.database import Database
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore
from locus.v1 import ast_pb2, gateway_pb2, ingestion_pb2, retrieval_pb2

pytestmark = pytest.mark.integration


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            async for _ in call:
                pass
        else:
            await call
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    raise AssertionError("the call succeeded")


async def ask_status(stub: Any, request: Any) -> tuple[grpc.StatusCode, str]:
    try:
        async for _ in stub.Ask(request):
            pass
    except grpc.aio.AioRpcError as error:
        return error.code(), error.details() or ""
    raise AssertionError("the call succeeded")


@pytest.mark.parametrize(
    ("request_values", "message"),
    [
        ({"question": ""}, "question must not be empty"),
        ({"question": "   \n"}, "question must not be empty"),
        ({"question": "q" * 250_001}, "question is 250001 characters long; the limit is 250000"),
        ({"max_files": -2}, "max_files must not be negative"),
        ({"max_symbols": 100_000}, "max_symbols must be at most"),
        ({"impact_depth": 50}, "impact_depth must be at most"),
        ({"path_prefix": "../../etc"}, "without '..'"),
    ],
)
async def test_invalid_locate_requests(stack, gateway, request_values, message: str) -> None:
    stack.require("ingestion")
    values = {"project_id": "shop", "question": "where are orders placed?", **request_values}
    code, details = await status_of(gateway.stub.Locate(gateway_pb2.LocateRequest(**values)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message in details


async def test_invalid_ask_requests(stack, gateway) -> None:
    stack.require("ingestion")
    for request, message in (
        (gateway_pb2.AskRequest(project_id="shop", question=""), "must not be empty"),
        (gateway_pb2.AskRequest(project_id="shop", question="x" * 250_001), "the limit is 250000"),
        (
            gateway_pb2.AskRequest(project_id="shop", question="why?", max_context_chunks=999),
            "max_context_chunks must be at most",
        ),
    ):
        code, details = await ask_status(gateway.stub, request)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert message in details


async def test_unknown_projects_are_not_found(stack, gateway) -> None:
    stack.require("ingestion")
    locate = gateway_pb2.LocateRequest(project_id="no-such-project", question="where?")
    code, details = await status_of(gateway.stub.Locate(locate))
    assert code == grpc.StatusCode.NOT_FOUND
    assert "no-such-project" in details
    ask = gateway_pb2.AskRequest(project_id="no-such-project", question="where?")
    assert (await ask_status(gateway.stub, ask))[0] == grpc.StatusCode.NOT_FOUND


async def test_a_project_never_scanned_is_a_failed_precondition(stack, gateway) -> None:
    stack.require("ingestion")
    project = await gateway.create_project()
    expected = (
        f"project {project.name} has not been scanned yet; run locus scan {project.name} --wait"
    )
    for ref in (project.name, project.project_id):
        code, details = await status_of(
            gateway.stub.Locate(gateway_pb2.LocateRequest(project_id=ref, question="where?"))
        )
        assert (code, details) == (grpc.StatusCode.FAILED_PRECONDITION, expected)
    ask = gateway_pb2.AskRequest(project_id=project.name, question="where?")
    assert await ask_status(gateway.stub, ask) == (grpc.StatusCode.FAILED_PRECONDITION, expected)


async def test_a_stopped_retrieval_service_is_unavailable(
    stack, start_gateway, sample_tree: Path, dead_address: str
) -> None:
    stack.require("ingestion")
    gateway = await start_gateway(retrieval=dead_address)
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error

    code, details = await status_of(
        gateway.stub.Locate(gateway_pb2.LocateRequest(project_id=project.name, question="orders"))
    )
    assert code == grpc.StatusCode.UNAVAILABLE
    assert details.startswith(f"retrieval service at {dead_address} is unavailable: ")
    ask = gateway_pb2.AskRequest(project_id=project.name, question="orders")
    code, details = await ask_status(gateway.stub, ask)
    assert code == grpc.StatusCode.UNAVAILABLE
    assert details.startswith(f"retrieval service at {dead_address} is unavailable: ")


async def test_a_stopped_ast_service_is_unavailable(stack, start_gateway, dead_address) -> None:
    stack.require("ingestion")
    gateway = await start_gateway(ast=dead_address)
    code, details = await status_of(
        gateway.stub.GetAstNode(ast_pb2.GetNodeRequest(node_id="n_0123456789abcdef"))
    )
    assert code == grpc.StatusCode.UNAVAILABLE
    assert details.startswith(f"ast service at {dead_address} is unavailable: ")


async def test_find_symbols_and_search_on_a_project_never_scanned_say_so(stack, gateway) -> None:
    # As Locate, Search and ReadFile answer it, not with an empty list.
    stack.require("ingestion", "ast")
    project = await gateway.create_project()
    code, details = await status_of(
        gateway.stub.FindSymbols(ast_pb2.FindSymbolsRequest(project_id=project.name, name="x"))
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert f"project {project.name} has not been scanned yet" in details
    code, details = await status_of(
        gateway.stub.Search(
            retrieval_pb2.SearchRequest(
                query="x", filters=retrieval_pb2.SearchFilters(project_id=project.name)
            )
        )
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert f"project {project.name} has not been scanned yet" in details  # not by its id


async def test_the_request_id_is_echoed_and_recorded(stack, gateway) -> None:
    stack.require("ingestion")
    request_id = f"portal-{uuid.uuid4().hex}"
    call = gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id="no-such-project", question="where is `Cart`?"),
        metadata=(("x-request-id", request_id),),
    )
    assert dict(await call.initial_metadata())["x-request-id"] == request_id
    assert (await status_of(call))[0] == grpc.StatusCode.NOT_FOUND

    record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
    assert record.request_id == request_id
    assert (record.kind, record.status) == ("locate", "failed")
    assert (record.project_ref, record.project_id) == ("no-such-project", "")
    assert record.question == "where is `Cart`?"
    assert record.created_at.seconds > 0
    assert record.completed_at.ToDatetime() >= record.created_at.ToDatetime()


async def test_a_request_id_is_issued_when_none_is_sent(stack, gateway) -> None:
    stack.require("ingestion")
    ask = gateway.stub.Ask(gateway_pb2.AskRequest(project_id="no-such-project", question="why?"))
    issued = dict(await ask.initial_metadata())["x-request-id"]
    assert issued
    assert (await status_of(ask))[0] == grpc.StatusCode.NOT_FOUND
    record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=issued))
    assert (record.kind, record.status) == ("ask", "failed")


async def test_a_reused_request_id_is_recorded_under_a_derived_one(stack, gateway) -> None:
    stack.require("ingestion")
    request_id = f"reused-{uuid.uuid4().hex[:8]}"
    request = gateway_pb2.LocateRequest(project_id="no-such-project", question="where?")
    for _ in range(2):
        call = gateway.stub.Locate(request, metadata=(("x-request-id", request_id),))
        assert (await status_of(call))[0] == grpc.StatusCode.NOT_FOUND
    derived = dict(await call.trailing_metadata())["x-request-id"]
    assert derived.startswith(f"{request_id}.")
    listed = await gateway.stub.ListRequests(gateway_pb2.ListRequestsRequest())
    assert {r.request_id for r in listed.requests} == {request_id, derived}


async def test_an_inbound_trace_is_continued_and_carried_to_every_hop(stack, start_gateway) -> None:
    stack.require("ingestion")
    spans = InMemorySpanExporter()
    gateway = await start_gateway(exporters=[spans])
    trace_id = uuid.uuid4().hex
    request_id = f"traced-{uuid.uuid4().hex[:8]}"
    call = gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id="no-such-project", question="where?"),
        metadata=(
            ("traceparent", f"00-{trace_id}-{'1' * 16}-01"),
            ("x-request-id", request_id),
        ),
    )
    assert (await status_of(call))[0] == grpc.StatusCode.NOT_FOUND

    finished = spans.get_finished_spans()
    server = [s for s in finished if s.name == "/locus.v1.Gateway/Locate"]
    outbound = [s for s in finished if s.name == "/locus.v1.IngestionService/GetProject"]
    assert server
    assert outbound
    for span in [*server, *outbound]:
        assert format(span.context.trace_id, "032x") == trace_id
        assert span.attributes is not None
        assert span.attributes["locus.request_id"] == request_id
    assert outbound[0].parent is not None
    assert outbound[0].parent.span_id == server[0].context.span_id

    store = SqlMetadataStore(Database(gateway.settings.sqlalchemy_url("gateway.db")))
    try:
        stored = await store.get_request(request_id)
    finally:
        await store.close()
    assert stored is not None
    assert stored.trace_id == trace_id
