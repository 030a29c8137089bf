"""Code through the gateway, end to end on a scanned sample project (real ingestion, ast,
retrieval, impact and answer services): ReadFile returns the fixture file's real lines and
refuses bad paths and ranges with the right status, GetFileOutline delegates to ast, every
citation of Ask comes with a snippet of the cited lines, GetRequest returns what Ask stored, and
ListFeedback shows a principal only the feedback on its own requests."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from gateway_calls import make_key, refusal, wait_for_record

from locus.v1 import (
    answer_pb2,
    ast_pb2,
    common_pb2,
    gateway_pb2,
    impact_pb2,
    ingestion_pb2,
    retrieval_pb2,
)

pytestmark = pytest.mark.integration

ORDERS = "src/shop/orders.py"
READER = gateway_pb2.ROLE_READER


@pytest.fixture
async def scanned(stack, gateway, sample_tree: Path) -> Any:
    """The sample project, scanned and indexed by every running stage."""
    stack.require("ingestion", "ast", "retrieval")
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    return await gateway.stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=project.name))


def file_lines(sample_tree: Path, relative_path: str) -> list[str]:
    return (sample_tree / relative_path).read_text(encoding="utf-8").splitlines()


async def test_read_file_returns_the_files_numbered_lines(gateway, scanned, sample_tree) -> None:
    real = file_lines(sample_tree, ORDERS)
    whole = await gateway.stub.ReadFile(
        gateway_pb2.ReadFileRequest(project_id=scanned.name, relative_path=ORDERS)
    )
    assert [(line.number, line.text) for line in whole.lines] == list(enumerate(real, start=1))
    assert (whole.start_line, whole.end_line, whole.total_lines) == (1, len(real), len(real))
    assert whole.language == "python"
    assert whole.snapshot_id == scanned.latest_snapshot_id
    assert whole.project_id == scanned.project_id
    assert whole.relative_path == ORDERS
    assert whole.file_id
    assert whole.sha256

    part = await gateway.stub.ReadFile(
        gateway_pb2.ReadFileRequest(
            project_id=scanned.project_id, relative_path=f"./{ORDERS}", start_line=14, end_line=19
        )
    )
    assert [(line.number, line.text) for line in part.lines] == [
        (number, real[number - 1]) for number in range(14, 20)
    ]
    assert (part.start_line, part.end_line, part.total_lines) == (14, 19, len(real))

    by_id = await gateway.stub.ReadFile(
        gateway_pb2.ReadFileRequest(
            project_id=scanned.name,
            file_id=whole.file_id,
            start_line=len(real),
            end_line=len(real) + 50,
        )
    )
    # An end past the file's end stops at its last line.
    assert [(line.number, line.text) for line in by_id.lines] == [(len(real), real[-1])]
    assert by_id.relative_path == ORDERS


@pytest.mark.parametrize(
    ("fields", "code", "says"),
    [
        ({"relative_path": "../secrets.txt"}, grpc.StatusCode.INVALID_ARGUMENT, "'..'"),
        ({"relative_path": "src/../../etc/passwd"}, grpc.StatusCode.INVALID_ARGUMENT, "'..'"),
        ({"relative_path": "/etc/passwd"}, grpc.StatusCode.INVALID_ARGUMENT, "absolute"),
        ({"relative_path": ""}, grpc.StatusCode.INVALID_ARGUMENT, "relative_path"),
        ({"relative_path": "src/shop/missing.py"}, grpc.StatusCode.NOT_FOUND, "no file"),
        ({"file_id": "f" * 32}, grpc.StatusCode.NOT_FOUND, "no file"),
        (
            {"relative_path": ORDERS, "start_line": 1, "end_line": 2001},
            grpc.StatusCode.OUT_OF_RANGE,
            "at most 2000",
        ),
        ({"relative_path": ORDERS, "start_line": 500}, grpc.StatusCode.OUT_OF_RANGE, "past"),
        (
            {"relative_path": ORDERS, "start_line": 9, "end_line": 3},
            grpc.StatusCode.INVALID_ARGUMENT,
            "before",
        ),
    ],
)
async def test_read_file_refuses_bad_paths_and_ranges(
    gateway, scanned, fields: dict[str, Any], code: grpc.StatusCode, says: str
) -> None:
    error = await refusal(
        gateway.stub.ReadFile(gateway_pb2.ReadFileRequest(project_id=scanned.name, **fields))
    )
    assert error.code() == code, error.details()
    assert says in (error.details() or "")


async def test_a_reader_of_another_project_may_not_read_or_outline(gateway, scanned) -> None:
    other = await gateway.create_project()
    key = await make_key(gateway.stub, (other.name, READER))
    stranger = gateway.stub_as(key.api_key)
    for call in (
        stranger.ReadFile(
            gateway_pb2.ReadFileRequest(project_id=scanned.name, relative_path=ORDERS)
        ),
        stranger.GetFileOutline(
            ast_pb2.GetFileOutlineRequest(project_id=scanned.name, relative_path=ORDERS)
        ),
    ):
        error = await refusal(call)
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error.details()
    # A reader of the project itself may.
    reader = gateway.stub_as((await make_key(gateway.stub, (scanned.name, READER))).api_key)
    read = await reader.ReadFile(
        gateway_pb2.ReadFileRequest(project_id=scanned.name, relative_path=ORDERS, end_line=1)
    )
    assert read.lines[0].number == 1
    outline = await reader.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=scanned.name, relative_path=ORDERS)
    )
    assert "shop.orders.OrderService" in {s.qualified_name for s in outline.symbols}
    found = await reader.FindSymbols(
        ast_pb2.FindSymbolsRequest(project_id=scanned.name, name="place_order")
    )
    assert "shop.orders.OrderService.place_order" in {s.qualified_name for s in found.symbols}


async def test_get_file_outline_lists_the_files_symbols(gateway, scanned, sample_tree) -> None:
    outline = await gateway.stub.GetFileOutline(
        ast_pb2.GetFileOutlineRequest(project_id=scanned.name, relative_path=ORDERS)
    )
    names = {symbol.qualified_name for symbol in outline.symbols}
    assert {"shop.orders.OrderService", "shop.orders.OrderService.place_order"} <= names
    real = file_lines(sample_tree, ORDERS)
    place = next(s for s in outline.symbols if s.name == "place_order")
    assert "def place_order" in real[place.location.start_line - 1]
    for fields, code in (
        ({"relative_path": "../orders.py"}, grpc.StatusCode.INVALID_ARGUMENT),
        ({}, grpc.StatusCode.INVALID_ARGUMENT),
        ({"relative_path": "src/shop/missing.py"}, grpc.StatusCode.NOT_FOUND),
    ):
        error = await refusal(
            gateway.stub.GetFileOutline(
                ast_pb2.GetFileOutlineRequest(project_id=scanned.name, **fields)
            )
        )
        assert error.code() == code, (fields, error.details())
        if code == grpc.StatusCode.NOT_FOUND:
            # The project as the caller named it, not the id the gateway looked up.
            assert error.details().startswith(
                f"project {scanned.name!r} has no file at 'src/shop/missing.py'"
            ), error.details()


async def test_ask_sends_a_snippet_of_the_files_lines_with_each_citation(
    stack, gateway, scanned, sample_tree
) -> None:
    stack.require("answer")
    request_id = f"ask-{uuid.uuid4().hex[:8]}"
    events = [
        event
        async for event in gateway.stub.Ask(
            gateway_pb2.AskRequest(
                project_id=scanned.name, question="What does place_order do with the card?"
            ),
            metadata=(("x-request-id", request_id),),
        )
    ]
    kinds = [e.WhichOneof("event") for e in events]
    citations = [e.citation for e in events if e.WhichOneof("event") == "citation"]
    snippets = [e.snippet for e in events if e.WhichOneof("event") == "snippet"]
    assert citations, kinds
    assert len(snippets) == len(citations)
    for index, kind in enumerate(kinds):
        if kind == "citation":
            assert kinds[index + 1] == "snippet"
    for citation, snippet in zip(citations, snippets, strict=True):
        assert snippet.citation_id == citation.citation_id
        assert snippet.location.relative_path == citation.location.relative_path
        assert snippet.location.language
        assert snippet.lines
        real = file_lines(sample_tree, snippet.location.relative_path)
        assert [(line.number, line.text) for line in snippet.lines] == [
            (number, real[number - 1])
            for number in range(snippet.location.start_line, snippet.location.end_line + 1)
        ]
        assert snippet.location.start_line == citation.location.start_line

    record = await wait_for_record(gateway, request_id)
    assert record.status == "completed"
    assert list(record.citations) == citations
    assert record.retrieved
    assert all(not hit.chunk.text for hit in record.retrieved)
    assert record.context
    assert all(snippet.chunk.text for snippet in record.context)
    cited_chunks = {snippet.chunk.chunk_id for snippet in record.context}
    assert {c.chunk_id for c in citations} <= cited_chunks
    assert {"admission", "answer"} <= set(record.timings_ms)
    assert record.trace_id
    assert len(record.trace_id) == 32
    assert record.principal.startswith("key:")
    assert record.snapshot_id == scanned.latest_snapshot_id
    assert record.project_name == scanned.name
    assert events[-1].final.status == answer_pb2.FINAL_STATUS_FINISHED


async def test_get_request_and_list_feedback_show_only_ones_own(stack, gateway, scanned) -> None:
    key = await make_key(gateway.stub, (scanned.name, READER))
    reader = gateway.stub_as(key.api_key)
    located = await reader.Locate(
        gateway_pb2.LocateRequest(project_id=scanned.name, question="where is place_order?")
    )
    mine = located.request_id
    await reader.RecordFeedback(
        gateway_pb2.RecordFeedbackRequest(request_id=mine, rating=4, comment="close")
    )
    admins = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id=scanned.name, question="where is charge_card?")
    )
    await gateway.stub.RecordFeedback(
        gateway_pb2.RecordFeedbackRequest(request_id=admins.request_id, rating=2)
    )

    record = await reader.GetRequest(gateway_pb2.GetRequestRequest(request_id=mine))
    assert record.retrieved
    assert record.principal == f"key:{key.key.key_id}"
    assert [(f.rating, f.comment) for f in record.feedback] == [(4, "close")]

    own = await reader.ListFeedback(gateway_pb2.ListFeedbackRequest())
    assert [(f.request_id, f.rating, f.project_id) for f in own.feedback] == [
        (mine, 4, scanned.project_id)
    ]
    by_project = await reader.ListFeedback(gateway_pb2.ListFeedbackRequest(project_id=scanned.name))
    assert [f.request_id for f in by_project.feedback] == [mine]
    for call in (
        reader.GetRequest(gateway_pb2.GetRequestRequest(request_id=admins.request_id)),
        reader.ListFeedback(gateway_pb2.ListFeedbackRequest(request_id=admins.request_id)),
    ):
        error = await refusal(call)
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error.details()

    everyone = await gateway.stub.ListFeedback(
        gateway_pb2.ListFeedbackRequest(
            project_id=scanned.project_id, page=common_pb2.PageRequest(page_size=1)
        )
    )
    assert [f.request_id for f in everyone.feedback] == [admins.request_id]  # newest first
    rest = await gateway.stub.ListFeedback(
        gateway_pb2.ListFeedbackRequest(
            project_id=scanned.project_id,
            page=common_pb2.PageRequest(page_size=1, page_token=everyone.next_page_token),
        )
    )
    assert [f.request_id for f in rest.feedback] == [mine]
    error = await refusal(
        gateway.stub.ListFeedback(
            gateway_pb2.ListFeedbackRequest(request_id=f"unknown-{uuid.uuid4().hex[:6]}")
        )
    )
    assert error.code() == grpc.StatusCode.NOT_FOUND


async def test_compute_impact_walks_the_projects_graph_for_a_reader(
    stack, gateway, scanned
) -> None:
    stack.require("impact")
    found = await gateway.stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(project_id=scanned.name, name="shop.payments.charge_card")
    )
    seed = next(s.node_id for s in found.symbols if s.qualified_name == "shop.payments.charge_card")
    request = impact_pb2.ComputeImpactRequest(project_id=scanned.name, seed_node_ids=[seed])
    reader = gateway.stub_as((await make_key(gateway.stub, (scanned.name, READER))).api_key)
    impacted: set[str] = set()
    for _ in range(100):  # impact indexes what ast parsed, after the scan is searchable
        try:
            reply = await reader.ComputeImpact(request)
        except grpc.aio.AioRpcError as error:
            not_yet = error.code()  # NOT_FOUND until impact holds the project's files
        else:
            impacted = {i.symbol.qualified_name for i in reply.symbols}
            if "shop.orders.OrderService.place_order" in impacted:
                break
            not_yet = grpc.StatusCode.OK
        assert not_yet in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.OK)
        await asyncio.sleep(0.2)
    assert "shop.orders.OrderService.place_order" in impacted  # its caller
    assert "src/shop/orders.py" in {f.relative_path for f in reply.files}

    other = await gateway.create_project()
    stranger = gateway.stub_as((await make_key(gateway.stub, (other.name, READER))).api_key)
    denied = await refusal(stranger.ComputeImpact(request))
    assert denied.code() == grpc.StatusCode.PERMISSION_DENIED, denied.details()
    empty = await refusal(
        reader.ComputeImpact(impact_pb2.ComputeImpactRequest(project_id=scanned.name))
    )
    assert empty.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "at least one seed" in (empty.details() or "")
    deep = await refusal(
        reader.ComputeImpact(
            impact_pb2.ComputeImpactRequest(project_id=scanned.name, seed_node_ids=[seed], depth=-1)
        )
    )
    assert deep.code() == grpc.StatusCode.INVALID_ARGUMENT, deep.details()


async def test_a_path_prefix_reads_as_locate_reads_it_in_find_symbols_and_search(
    gateway, scanned
) -> None:
    """`./src/` and `src\\shop` are `src/` and `src/shop`, as Locate reads them; a prefix
    climbing out of the source is refused, not answered with nothing."""

    async def symbols(prefix: str) -> list[str]:
        found = await gateway.stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(project_id=scanned.name, name="place", path_prefix=prefix)
        )
        return sorted(s.qualified_name for s in found.symbols)

    async def searched(prefix: str) -> list[str]:
        reply = await gateway.stub.Search(
            retrieval_pb2.SearchRequest(
                query="place order",
                top_k=5,
                filters=retrieval_pb2.SearchFilters(project_id=scanned.name, path_prefix=prefix),
            )
        )
        return [hit.chunk.chunk_id for hit in reply.hits]

    assert await symbols("src/")
    assert await symbols("./src/") == await symbols("src\\") == await symbols("src/")
    assert await searched("src/shop")
    assert await searched("./src/shop") == await searched("src/shop")
    for call in (
        gateway.stub.FindSymbols(
            ast_pb2.FindSymbolsRequest(project_id=scanned.name, name="x", path_prefix="../")
        ),
        gateway.stub.Search(
            retrieval_pb2.SearchRequest(
                query="x",
                filters=retrieval_pb2.SearchFilters(project_id=scanned.name, path_prefix="a/../.."),
            )
        ),
    ):
        error = await refusal(call)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "without '..'" in error.details()
