"""The optional rerank stage of Locate through the real gateway and stack: with
LOCUS_GATEWAY_RERANK_URL set, the best symbols go to the rerank endpoint (a real HTTP server
answering like vLLM's /v1/rerank) in the request's trace, and come back in its order; an
endpoint that fails leaves Locate's own ranking, with a note on the request."""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rerank_server import RerankServer

from locus.database import Database
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore
from locus.v1 import gateway_pb2, ingestion_pb2

pytestmark = pytest.mark.integration


def prefers_refunds(query: str, document: str) -> float:
    """A reranker with an opinion: the refund code is what matters, whatever was asked."""
    return 0.99 if "refund_payment" in document else 0.01


@pytest.fixture
def rerank_server() -> Iterator[Any]:
    server = RerankServer(prefers_refunds)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def scanned_project(gateway: Any, sample_tree: Path) -> str:
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    return str(project.name)


async def record_of(gateway: Any, request_id: str) -> Any:
    deadline = time.monotonic() + 10
    while True:
        record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
        if record.status != "running" or time.monotonic() > deadline:
            return record
        await asyncio.sleep(0.1)


async def reranking_gateway(
    stack: Any, start_gateway: Any, rerank_server: Any, spans: Any, **settings: Any
) -> Any:
    stack.require("ingestion", "ast", "retrieval")
    return await start_gateway(
        exporters=[spans],
        settings_update={
            "rerank_url": rerank_server.url,
            "rerank_model": "bge-reranker-v2-m3",
            "rerank_weight": math.inf,  # the endpoint's order alone: its opinion is the test
            **settings,
        },
    )


async def test_locate_is_reranked_in_the_requests_trace(
    stack, start_gateway, sample_tree: Path, rerank_server: Any
) -> None:
    spans = InMemorySpanExporter()
    gateway = await reranking_gateway(stack, start_gateway, rerank_server, spans)
    project = await scanned_project(gateway, sample_tree)
    request_id = f"rerank-{uuid.uuid4().hex[:8]}"
    trace_id = uuid.uuid4().hex
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=project, question="Why does place_order charge the card twice?"
        ),
        metadata=(("x-request-id", request_id), ("traceparent", f"00-{trace_id}-{'3' * 16}-01")),
    )
    assert response.symbols[0].symbol.name == "refund_payment"
    assert response.symbols[0].evidence[0].signal == "rerank"
    assert response.files[0].relative_path.endswith("payments.py")

    (request,) = rerank_server.requests
    assert request.body["model"] == "bge-reranker-v2-m3"
    assert request.body["query"] == "Why does place_order charge the card twice?"
    assert any("def place_order" in document for document in request.body["documents"])
    assert request.headers["x-request-id"] == request_id
    assert request.headers["traceparent"].split("-")[1] == trace_id
    rerank = next(s for s in spans.get_finished_spans() if s.name == "gateway.rerank")
    assert format(rerank.context.trace_id, "032x") == trace_id


async def test_symbols_no_retrieved_chunk_cites_reach_the_reranker_with_their_own_code(
    stack, start_gateway, sample_tree: Path, rerank_server: Any
) -> None:
    spans = InMemorySpanExporter()
    # Two chunk hits only: the rest of the window comes from the best files' outlines and the
    # call graph, with no retrieved text of their own.
    gateway = await reranking_gateway(
        stack, start_gateway, rerank_server, spans, search_top_k=2, search_candidates_per_list=2
    )
    project = await scanned_project(gateway, sample_tree)
    request_id = f"rerank-code-{uuid.uuid4().hex[:8]}"
    trace_id = uuid.uuid4().hex
    await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=project, question="Why does place_order charge the card twice?"
        ),
        metadata=(("x-request-id", request_id), ("traceparent", f"00-{trace_id}-{'4' * 16}-01")),
    )
    (request,) = rerank_server.requests
    documents = request.body["documents"]
    assert len(documents) > 2
    headers_only = [d for d in documents if not d.split("\n", 1)[1].strip()]
    assert not headers_only, headers_only
    refund = next(d for d in documents if "function shop.payments.refund_payment" in d)
    assert 'return {"refunded": payment_id}' in refund
    # The new hop is in the request's trace, with its request ID.
    texts = next(
        s for s in spans.get_finished_spans() if s.name == "/locus.v1.AstService/GetSymbolTexts"
    )
    assert format(texts.context.trace_id, "032x") == trace_id
    assert texts.attributes is not None
    assert texts.attributes["locus.request_id"] == request_id
    assert texts.status.is_ok


async def test_a_failing_rerank_endpoint_keeps_the_ranking_with_a_note(
    stack, start_gateway, sample_tree: Path, rerank_server: Any
) -> None:
    stack.require("ingestion", "ast", "retrieval")
    rerank_server.status = 503
    # credentials in the endpoint's URL never reach the request log
    with_credentials = rerank_server.url.replace("http://", "http://locus:s3cret-key@", 1)
    gateway = await start_gateway(
        settings_update={"rerank_url": with_credentials, "rerank_model": "bge-reranker-v2-m3"}
    )
    project = await scanned_project(gateway, sample_tree)
    request_id = f"rerank-down-{uuid.uuid4().hex[:8]}"
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id=project, question="What does place_order do?"),
        metadata=(("x-request-id", request_id),),
    )
    assert response.symbols[0].symbol.name == "place_order"
    record = await record_of(gateway, request_id)
    assert record.status == "completed"
    # the note is kept with the request in the gateway's request log
    store = SqlMetadataStore(Database(gateway.settings.sqlalchemy_url("gateway.db")))
    await store.initialize()
    try:
        stored = await store.get_request(request_id)
    finally:
        await store.close()
    assert stored is not None
    assert "rerank skipped: rerank endpoint" in stored.notes
    assert "answered HTTP 503" in stored.notes
    assert "s3cret-key" not in stored.notes
    assert "locus:***@" not in stored.notes
    assert "***@127.0.0.1" in stored.notes
