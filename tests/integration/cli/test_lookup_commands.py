"""`locus search`, `locus node`, `locus project get` and `locus scan-status` as processes against
a scripted Gateway on a real gRPC port (--gateway): what each command sends, and what it prints
(plain and --json)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from scripted_gateway import LocusRunner, cli_environment, locus_runner, serve_gateway

from locus.v1 import (
    ast_pb2,
    common_pb2,
    events_pb2,
    gateway_pb2_grpc,
    ingestion_pb2,
    retrieval_pb2,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

CHARGE = common_pb2.Symbol(
    node_id="n_charge",
    qualified_name="shop.payments.charge_card",
    scope_name="charge_card",
    name="charge_card",
    kind=common_pb2.SYMBOL_KIND_FUNCTION,
    signature="def charge_card(customer_id, amount)",
    docstring="Charge a card.",
    parent_qualified_name="shop.payments",
    location=common_pb2.CodeLocation(
        relative_path="src/pay.py", start_line=10, end_line=14, language="python"
    ),
)


class ScriptedGateway(gateway_pb2_grpc.GatewayServicer):
    def __init__(self) -> None:
        self.requests: list[object] = []

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.SearchResponse:
        self.requests.append(request)
        chunk = common_pb2.Chunk(
            chunk_id="c_1",
            kind=common_pb2.CHUNK_KIND_FUNCTION,
            symbol_qualified_name=CHARGE.qualified_name,
            text="\ndef charge_card(customer_id, amount):\n    return amount\n",
            location=CHARGE.location,
        )
        return retrieval_pb2.SearchResponse(
            mode=request.mode,
            hits=[
                retrieval_pb2.SearchHit(
                    chunk=chunk, score=0.5, lexical_rank=1, vector_rank=3, lexical_score=7.25
                )
            ],
        )

    async def GetAstNode(
        self, request: ast_pb2.GetNodeRequest, context: grpc.aio.ServicerContext
    ) -> ast_pb2.GetNodeResponse:
        self.requests.append(request)
        if request.node_id != CHARGE.node_id:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no node {request.node_id}")
        reply = ast_pb2.GetNodeResponse(symbol=CHARGE)
        if request.include_relations:
            reply.outgoing.append(
                common_pb2.Relation(
                    kind=common_pb2.RELATION_KIND_CALLS,
                    source_node_id=CHARGE.node_id,
                    source_qualified_name=CHARGE.qualified_name,
                    target_name="gateway.capture",
                    line=12,
                )
            )
            reply.incoming.append(
                common_pb2.Relation(
                    kind=common_pb2.RELATION_KIND_CALLS,
                    source_qualified_name="shop.checkout.pay",
                    target_node_id=CHARGE.node_id,
                    line=40,
                )
            )
        return reply

    async def GetProject(
        self, request: ingestion_pb2.GetProjectRequest, context: grpc.aio.ServicerContext
    ) -> ingestion_pb2.Project:
        self.requests.append(request)
        project = ingestion_pb2.Project(
            project_id="p_1", name=request.project_id, system="shop", latest_snapshot_id="s_9"
        )
        project.created_at.FromSeconds(1_700_000_000)
        return project

    async def GetScan(
        self, request: ingestion_pb2.GetScanRequest, context: grpc.aio.ServicerContext
    ) -> ingestion_pb2.ScanJob:
        self.requests.append(request)
        job = ingestion_pb2.ScanJob(
            job_id=request.job_id,
            project_id="p_1",
            snapshot_id="s_9",
            state=(
                ingestion_pb2.SCAN_STATE_FAILED
                if request.job_id == "job_bad"
                else ingestion_pb2.SCAN_STATE_COMPLETED
            ),
            error="disk full" if request.job_id == "job_bad" else "",
            stats=events_pb2.ScanStats(files_seen=40, files_added=4, bytes_read=2_000_000),
        )
        job.created_at.FromSeconds(1_700_000_000)
        job.completed_at.FromSeconds(1_700_000_004)
        return job


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[ScriptedGateway, str]]:
    servicer = ScriptedGateway()
    async with serve_gateway(servicer) as address:
        yield servicer, address


@pytest.fixture
def locus(tmp_path: Path, gateway: tuple[ScriptedGateway, str]) -> LocusRunner:
    return locus_runner(cli_environment(tmp_path), gateway[1])


async def test_search_sends_the_mode_limit_and_path_and_prints_the_hits(gateway, locus) -> None:
    servicer, _ = gateway
    code, out, err = await locus(
        "search", "shop", "charge card", "--mode", "bm25", "--limit", "5", "--path", "src/"
    )
    assert code == 0, err
    sent = servicer.requests[-1]
    assert (sent.query, sent.mode, sent.top_k) == ("charge card", retrieval_pb2.SEARCH_MODE_BM25, 5)
    assert (sent.filters.project_id, sent.filters.path_prefix) == ("shop", "src/")
    assert "src/pay.py:10-14" in out
    assert "shop.payments.charge_card" in out
    assert "bm25 #1 vector #3" in out
    assert "def charge_card(customer_id, amount):" in out

    code, out, err = await locus("search", "shop", "charge card", "--json")
    assert code == 0, err
    assert servicer.requests[-1].mode == retrieval_pb2.SEARCH_MODE_HYBRID
    data = json.loads(out)
    assert (data["project"], data["query"], data["mode"]) == ("shop", "charge card", "hybrid")
    assert data["request_id"]
    [hit] = data["hits"]
    assert hit["location"] == "src/pay.py:10-14"
    assert (hit["kind"], hit["symbol"], hit["lexical_rank"], hit["vector_rank"]) == (
        "function",
        "shop.payments.charge_card",
        1,
        3,
    )
    assert hit["text"].startswith("\ndef charge_card")


async def test_search_refuses_an_unknown_mode(locus) -> None:
    code, _, err = await locus("search", "shop", "charge", "--mode", "fuzzy")
    assert code == 2
    assert "fuzzy" in err


async def test_node_prints_the_symbol_and_its_relations(gateway, locus) -> None:
    servicer, _ = gateway
    code, out, err = await locus("node", "n_charge")
    assert code == 0, err
    assert servicer.requests[-1].include_relations is False
    assert "function shop.payments.charge_card  src/pay.py:10-14" in out
    assert "def charge_card(customer_id, amount)" in out
    assert "outgoing" not in out

    code, out, err = await locus("node", "n_charge", "--relations")
    assert code == 0, err
    assert servicer.requests[-1].include_relations is True
    assert "calls gateway.capture (unresolved) line 12" in out
    assert "calls shop.checkout.pay line 40" in out

    code, out, err = await locus("node", "n_charge", "--relations", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["symbol"]["qualified_name"] == "shop.payments.charge_card"
    assert data["children"] == []
    assert [(r["kind"], r["target_name"], r["line"]) for r in data["outgoing"]] == [
        ("calls", "gateway.capture", 12)
    ]
    assert data["incoming"][0]["source_qualified_name"] == "shop.checkout.pay"


async def test_node_reports_an_unknown_id(locus) -> None:
    code, _, err = await locus("node", "n_missing")
    assert code != 0
    assert "no node n_missing" in err


async def test_project_get_shows_one_project(gateway, locus) -> None:
    servicer, _ = gateway
    code, out, err = await locus("project", "get", "shop")
    assert code == 0, err
    assert servicer.requests[-1].project_id == "shop"
    assert "p_1" in out
    assert "s_9" in out
    assert "created 2023-11-14T22:13:20.000Z" in out

    code, out, err = await locus("project", "get", "shop", "--json")
    assert code == 0, err
    assert json.loads(out) == {
        "project_id": "p_1",
        "name": "shop",
        "system": "shop",
        "subsystem": "",
        "created_at": "2023-11-14T22:13:20.000Z",
        "latest_snapshot_id": "s_9",
    }


async def test_scan_status_shows_a_job_and_fails_for_a_failed_scan(gateway, locus) -> None:
    servicer, _ = gateway
    code, out, err = await locus("scan-status", "job_1")
    assert code == 0, err
    assert servicer.requests[-1].job_id == "job_1"
    assert "scan job_1 completed in 4.0 s (snapshot s_9)" in out
    assert "added 4" in out

    code, out, err = await locus("scan-status", "job_1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["job_id"], data["state"], data["elapsed_seconds"]) == ("job_1", "completed", 4.0)
    assert data["stats"]["files_seen"] == 40

    code, out, err = await locus("scan-status", "job_bad")
    assert code == 1
    assert "disk full" in out
