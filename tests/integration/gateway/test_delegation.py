"""Project, source, scan and symbol calls go through the gateway to the real services, with
their status codes and messages kept, and UNAVAILABLE naming a peer that is down."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from locus.v1 import ast_pb2, common_pb2, ingestion_pb2, retrieval_pb2

pytestmark = pytest.mark.integration


async def test_projects_sources_and_scans_are_delegated_to_ingestion(
    stack, gateway, sample_tree: Path
) -> None:
    stack.require("ingestion")
    project = await gateway.create_project(sample_tree)
    assert project.project_id
    assert project.latest_snapshot_id == ""

    by_name = await gateway.stub.GetProject(
        ingestion_pb2.GetProjectRequest(project_id=project.name)
    )
    assert by_name.project_id == project.project_id

    listed = await gateway.stub.ListProjects(ingestion_pb2.ListProjectsRequest())
    assert project.project_id in [p.project_id for p in listed.projects]

    sources = await gateway.stub.ListSources(
        ingestion_pb2.ListSourcesRequest(project_id=project.project_id)
    )
    assert [s.path for s in sources.sources] == [str(sample_tree)]

    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    assert job.stats.files_added == 5
    scanned = await gateway.stub.GetProject(
        ingestion_pb2.GetProjectRequest(project_id=project.project_id)
    )
    assert scanned.latest_snapshot_id == job.snapshot_id


async def test_downstream_errors_keep_their_code_and_message(stack, gateway) -> None:
    stack.require("ingestion")
    project = await gateway.create_project()

    with pytest.raises(grpc.aio.AioRpcError) as duplicate:
        await gateway.stub.CreateProject(ingestion_pb2.CreateProjectRequest(name=project.name))
    assert duplicate.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert project.name in (duplicate.value.details() or "")

    with pytest.raises(grpc.aio.AioRpcError) as unknown:
        await gateway.stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="no-such-project"))
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
    assert "no-such-project" in (unknown.value.details() or "")

    with pytest.raises(grpc.aio.AioRpcError) as no_sources:
        await gateway.stub.StartScan(ingestion_pb2.StartScanRequest(project_id=project.name))
    assert no_sources.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    with pytest.raises(grpc.aio.AioRpcError) as unknown_job:
        await gateway.stub.GetScan(ingestion_pb2.GetScanRequest(job_id="job_nope"))
    assert unknown_job.value.code() == grpc.StatusCode.NOT_FOUND


async def test_symbol_and_search_calls_resolve_project_names_first(stack, gateway) -> None:
    stack.require("ingestion")
    for call, request in (
        (gateway.stub.FindSymbols, ast_pb2.FindSymbolsRequest(project_id="no-such-project")),
        (
            gateway.stub.Search,
            retrieval_pb2.SearchRequest(
                query="orders", filters=retrieval_pb2.SearchFilters(project_id="no-such-project")
            ),
        ),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await call(request)
        assert error.value.code() == grpc.StatusCode.NOT_FOUND


async def test_find_symbols_by_project_name(stack, gateway, sample_tree: Path) -> None:
    stack.require("ingestion", "ast")
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error

    found = await gateway.stub.FindSymbols(
        ast_pb2.FindSymbolsRequest(project_id=project.name, name="place_order", exact=True)
    )
    assert [s.qualified_name for s in found.symbols] == ["shop.orders.OrderService.place_order"]
    node = await gateway.stub.GetAstNode(
        ast_pb2.GetNodeRequest(node_id=found.symbols[0].node_id, include_relations=True)
    )
    assert node.symbol.name == "place_order"
    assert node.symbol.kind == common_pb2.SYMBOL_KIND_METHOD


async def test_a_stopped_downstream_is_unavailable_with_a_clear_message(
    stack, start_gateway
) -> None:
    stack.require("ingestion")
    own_ingestion = stack.start_service("ingestion")
    try:
        gateway = await start_gateway(ingestion=own_ingestion.address)
        project = await gateway.create_project()
        own_ingestion.stop()
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await gateway.stub.GetProject(
                ingestion_pb2.GetProjectRequest(project_id=project.project_id)
            )
    finally:
        own_ingestion.stop()
    assert error.value.code() == grpc.StatusCode.UNAVAILABLE
    details = error.value.details() or ""
    assert details.startswith(f"ingestion service at {own_ingestion.address} is unavailable: ")
