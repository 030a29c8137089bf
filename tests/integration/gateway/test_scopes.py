"""Locate, Search and Ask over scopes wider than one project, through the real gateway and
services: a system of three projects (two in one subsystem, one in another) answers one Locate
with results from the right project, each labelled; a subsystem's scope never returns another
subsystem's code; a reader of one project sees only that project's results; the refusals; a
scoped Ask cites the right project's file with its lines."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest
from scoped_system import TREES

from locus.v1 import answer_pb2, common_pb2, gateway_pb2, retrieval_pb2

pytestmark = pytest.mark.integration


def scope(**fields: Any) -> Any:
    return common_pb2.Scope(**fields)


async def locate(stub: Any, question: str, **scope_fields: Any) -> Any:
    return await stub.Locate(
        gateway_pb2.LocateRequest(question=question, scope=scope(**scope_fields))
    )


async def test_a_system_answers_one_locate_from_the_right_projects_labelled(
    gateway: Any, system: dict[str, Any]
) -> None:
    projects = system["projects"]
    names = {p.project_id: p.name for p in projects.values()}
    keys = {p.project_id: key for key, p in projects.items()}

    response = await locate(
        gateway.stub,
        "where is the distance to a star computed from its parallax?",
        system=system["system"],
    )
    assert response.files, response
    best = response.files[0]
    assert best.relative_path == "src/telescope/parallax.py"
    assert (best.project_id, best.project_name) == (
        projects["telescope"].project_id,
        projects["telescope"].name,
    )
    for file in response.files:  # every result names its project, and it is the right one
        assert names[file.project_id] == file.project_name
        assert file.relative_path.startswith(f"src/{keys[file.project_id]}/")
    for symbol in response.symbols:
        assert symbol.symbol.location.project_id in names
    assert {p.project_id for p in response.projects} == set(names)
    assert all(p.snapshot_id and not p.skipped for p in response.projects)
    assert response.snapshot_id == ""

    invoice = await locate(
        gateway.stub, "compute the VAT tax owed on an invoice total", system=system["system"]
    )
    assert invoice.files[0].project_id == projects["invoices"].project_id

    # The request log records the scope as the request's project.
    record = await gateway.stub.GetRequest(
        gateway_pb2.GetRequestRequest(request_id=response.request_id)
    )
    assert (record.project_ref, record.project_id) == (f"system:{system['system']}", "")
    assert record.status == "completed"
    assert record.retrieved  # every project's retrieval hits are kept


async def test_a_subsystem_scope_never_returns_another_subsystems_code(
    gateway: Any, system: dict[str, Any]
) -> None:
    projects = system["projects"]
    response = await locate(
        gateway.stub,
        "compute the VAT tax owed on an invoice total",
        subsystem="astronomy",
        system=system["system"],
    )
    telescope = projects["telescope"].project_id
    assert all(f.project_id == telescope for f in response.files), response.files
    assert all(s.symbol.location.project_id == telescope for s in response.symbols)
    assert [p.project_id for p in response.projects] == [telescope]

    sales = await locate(
        gateway.stub,
        "where is the distance to a star computed from its parallax?",
        subsystem="sales",
        system=system["system"],
    )
    assert telescope not in {f.project_id for f in sales.files}
    assert {p.name for p in sales.projects} == {projects["orders"].name, projects["invoices"].name}

    # Search over the same scope: hits only from the subsystem's projects, each labelled.
    searched = await gateway.stub.Search(
        retrieval_pb2.SearchRequest(
            query="parallax distance star",
            mode=retrieval_pb2.SEARCH_MODE_HYBRID,
            top_k=10,
            scope=scope(subsystem="sales", system=system["system"]),
        )
    )
    assert searched.hits
    sales_ids = {projects["orders"].project_id, projects["invoices"].project_id}
    assert {h.chunk.location.project_id for h in searched.hits} <= sales_ids
    everywhere = await gateway.stub.Search(
        retrieval_pb2.SearchRequest(
            query="parallax distance star",
            mode=retrieval_pb2.SEARCH_MODE_HYBRID,
            top_k=10,
            scope=scope(system=system["system"]),
        )
    )
    assert everywhere.hits[0].chunk.location.project_id == telescope

    # Each extra whole-file query gets its own list, merged over the scope's projects by score.
    parts = await gateway.stub.Search(
        retrieval_pb2.SearchRequest(
            query="parallax distance star",
            mode=retrieval_pb2.SEARCH_MODE_BM25,
            top_whole_files=5,
            whole_file_queries=["value added tax on invoices", "parallax"],
            scope=scope(system=system["system"]),
        )
    )
    assert [listed.query for listed in parts.whole_file_lists] == [
        "value added tax on invoices",
        "parallax",
    ]
    tax, parallax = (list(listed.files) for listed in parts.whole_file_lists)
    assert tax[0].relative_path == "src/invoices/tax.py"
    assert parallax[0].relative_path == "src/telescope/parallax.py"
    for files in (tax, parallax):
        assert [f.rank for f in files] == list(range(1, len(files) + 1))
        assert [f.score for f in files] == sorted((f.score for f in files), reverse=True)


async def test_a_reader_of_one_project_sees_only_its_results_and_the_refusals(
    gateway: Any, system: dict[str, Any]
) -> None:
    projects = system["projects"]
    orders = projects["orders"]
    created = await gateway.stub.CreateApiKey(
        gateway_pb2.CreateApiKeyRequest(
            name=f"k-{uuid.uuid4().hex[:6]}",
            grants=[gateway_pb2.Grant(project=orders.name, role=gateway_pb2.ROLE_READER)],
        )
    )
    reader = gateway.stub_as(created.api_key)

    # Projects of the system it may not read are left out silently.
    response = await locate(
        reader,
        "where is the distance to a star computed from its parallax?",
        system=system["system"],
    )
    assert {f.project_id for f in response.files} <= {orders.project_id}
    assert [p.project_id for p in response.projects] == [orders.project_id]

    # A named project it may not read is refused, as for one project.
    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await locate(reader, "parallax", projects=[orders.name, projects["telescope"].name])
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED

    # A scope with no project it may read: a clear error.
    with pytest.raises(grpc.aio.AioRpcError) as empty:
        await locate(reader, "parallax", subsystem="astronomy", system=system["system"])
    assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no project you may read" in empty.value.details()

    # Named projects it may read: labelled like the rest.
    named = await locate(reader, "place an order for a basket", projects=[orders.name])
    assert named.files[0].project_name == orders.name

    # A scope and a project both, or a scope that mixes projects with a system: refused.
    with pytest.raises(grpc.aio.AioRpcError) as both:
        await gateway.stub.Locate(
            gateway_pb2.LocateRequest(
                project_id=orders.name, question="orders", scope=scope(system=system["system"])
            )
        )
    assert both.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as mixed:
        await locate(gateway.stub, "orders", projects=[orders.name], system=system["system"])
    assert mixed.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_system_scoped_ask_cites_the_right_projects_file_with_its_lines(
    stack: Any, gateway: Any, system: dict[str, Any]
) -> None:
    stack.require("answer")
    projects = system["projects"]
    keys = {p.project_id: key for key, p in projects.items()}
    events = [
        event
        async for event in gateway.stub.Ask(
            gateway_pb2.AskRequest(
                question="where is the distance to a star computed from its parallax?",
                scope=scope(system=system["system"]),
            )
        )
    ]
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "located", kinds
    assert kinds[-1] == "final", kinds
    located = events[0].located
    assert {p.project_id for p in located.projects} == set(keys)
    assert located.files[0].project_id == projects["telescope"].project_id

    citations = [e.citation for e in events if e.WhichOneof("event") == "citation"]
    snippets = [e.snippet for e in events if e.WhichOneof("event") == "snippet"]
    assert citations, kinds
    assert len(snippets) == len(citations)
    telescope = (projects["telescope"].project_id, "src/telescope/parallax.py")
    assert telescope in {(c.location.project_id, c.location.relative_path) for c in citations}
    for citation, snippet in zip(citations, snippets, strict=True):
        key = keys[citation.location.project_id]  # every citation names its project
        assert citation.location.relative_path.startswith(f"src/{key}/")
        assert snippet.location.project_id == citation.location.project_id
        assert snippet.lines
        real = TREES[key][snippet.location.relative_path].splitlines()
        assert [(line.number, line.text) for line in snippet.lines] == [
            (number, real[number - 1])
            for number in range(snippet.location.start_line, snippet.location.end_line + 1)
        ]
    assert events[-1].final.status == answer_pb2.FINAL_STATUS_FINISHED

    record = await gateway.stub.GetRequest(
        gateway_pb2.GetRequestRequest(request_id=events[0].request_id)
    )
    assert (record.project_ref, record.project_id) == (f"system:{system['system']}", "")
    assert record.context
    assert all(s.chunk.location.project_id in keys for s in record.context)

    with pytest.raises(grpc.aio.AioRpcError) as both:
        async for _ in gateway.stub.Ask(
            gateway_pb2.AskRequest(
                project_id=projects["orders"].name,
                question="orders",
                scope=scope(system=system["system"]),
            )
        ):
            pass
    assert both.value.code() == grpc.StatusCode.INVALID_ARGUMENT
