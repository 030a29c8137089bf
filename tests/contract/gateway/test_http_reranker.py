"""HttpReranker, the rerank endpoint adapter: the request it sends (model, query, documents of
the best symbols, top_n, bearer key, trace context and request id), how it applies the answer,
and a clear RerankerUnavailable for every way an endpoint fails. Against a real local HTTP
server answering like vLLM; against a real endpoint when ``LOCUS_TEST_RERANK_URL`` (and
``LOCUS_TEST_RERANK_MODEL``) name one, e.g. ``vllm serve BAAI/bge-reranker-v2-m3`` — skipped,
saying so, otherwise."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from rerank_server import RerankServer

from locus.gateway.adapters.http_reranker import HttpReranker
from locus.gateway.domain.errors import RerankerUnavailable
from locus.gateway.domain.ranking_types import (
    Evidence,
    RankedFile,
    RankedSymbol,
    Ranking,
    SymbolRef,
)
from locus.telemetry import with_request_id

pytestmark = pytest.mark.contract


QUESTION = "where is the retry limit for uploads enforced?"
CODE = {
    "c-upload": "def upload(blob, retries=3):\n    if attempt > MAX_UPLOAD_RETRIES: raise",
    "c-login": "def login(user, password):\n    return session_for(user)",
    "c-format": "def format_size(n):\n    return f'{n} bytes'",
}


def symbol(name: str, path: str, score: float, chunk: str) -> RankedSymbol:
    ref = SymbolRef(
        f"n:{name}", name, f"app.{name}", name, "function", f"f:{path}", path, "python", 1, 9
    )
    return RankedSymbol(ref, score, (Evidence("bm25", "lines 1-9", score, chunk),), (chunk,))


LOGIN = symbol("login", "app/auth.py", 2.0, "c-login")
FORMAT = symbol("format_size", "app/text.py", 1.5, "c-format")
UPLOAD = symbol("upload", "app/uploads.py", 1.0, "c-upload")
RANKING = Ranking(
    files=tuple(
        RankedFile(s.symbol.file_id, s.symbol.relative_path, "python", s.score, (s,), (), ())
        for s in (LOGIN, FORMAT, UPLOAD)
    ),
    symbols=(LOGIN, FORMAT, UPLOAD),
)


def shared_words(query: str, text: str) -> float:
    words = {w.strip("?,.():=") for w in query.lower().split()}
    return float(sum(w in text.lower() for w in words if len(w) > 3))


@pytest.fixture
def server() -> Iterator[Any]:
    running = RerankServer(shared_words)
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
async def reranker(server: Any) -> AsyncIterator[HttpReranker]:
    # weight inf: the endpoint's order alone, so each test reads what the endpoint said
    adapter = HttpReranker(
        server.url, "BAAI/bge-reranker-v2-m3", api_key="k-123", top_n=3, weight=math.inf
    )
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()


async def test_the_most_relevant_code_moves_up(reranker: HttpReranker, server: Any) -> None:
    reranked = await reranker.rerank(QUESTION, RANKING, CODE)
    assert reranked.symbols[0].symbol.name == "upload"
    assert reranked.files[0].relative_path == "app/uploads.py"
    assert reranked.symbols[0].evidence[0].signal == "rerank"
    assert "reranked by BAAI/bge-reranker-v2-m3" in reranked.symbols[0].evidence[0].detail

    (request,) = server.requests
    assert request.path == "/v1/rerank"
    assert request.body["model"] == "BAAI/bge-reranker-v2-m3"
    assert request.body["query"] == QUESTION
    assert request.body["top_n"] == 3
    assert request.body["documents"][2].startswith("app/uploads.py:1-9 function app.upload\n")
    assert CODE["c-upload"] in request.body["documents"][2]
    assert request.headers["authorization"] == "Bearer k-123"


async def test_the_trace_context_and_request_id_travel_with_the_call(
    reranker: HttpReranker, server: Any
) -> None:
    provider = TracerProvider()
    tracer = provider.get_tracer("tests")
    with with_request_id("req-rerank-1"), tracer.start_as_current_span("locate") as span:
        await reranker.rerank(QUESTION, RANKING, CODE)
        trace_id = format(span.get_span_context().trace_id, "032x")
    headers = server.requests[0].headers
    assert headers["x-request-id"] == "req-rerank-1"
    assert headers["traceparent"].split("-")[1] == trace_id
    assert "locus.request_id=req-rerank-1" in headers["baggage"]


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (503, '{"error": "overloaded"}', 'answered HTTP 503: {"error": "overloaded"}'),
        (200, '{"data": []}', "is not a rerank response"),
        (200, "<html>proxy error</html>", "is not a rerank response"),
        (
            200,
            '{"results": [{"index": 7, "relevance_score": 0.9}]}',
            "scored documents [7] of 3 sent",
        ),
    ],
)
async def test_a_failing_endpoint_is_a_clear_error(
    reranker: HttpReranker, server: Any, status: int, body: str, message: str
) -> None:
    server.status, server.raw_body = status, body
    with pytest.raises(RerankerUnavailable, match=r"rerank endpoint http://127\.0\.0\.1") as error:
        await reranker.rerank(QUESTION, RANKING, CODE)
    assert message in str(error.value)


async def test_an_unreachable_endpoint_is_a_clear_error(server: Any) -> None:
    server.stop()
    adapter = HttpReranker(server.url, "m", timeout_seconds=2)
    await adapter.start()
    try:
        with pytest.raises(RerankerUnavailable, match="unreachable: ConnectError"):
            await adapter.rerank(QUESTION, RANKING, CODE)
    finally:
        await adapter.stop()


async def test_by_default_the_relevance_is_mixed_with_the_ranking(server: Any) -> None:
    near_tie = replace(FORMAT, score=1.05)  # format_size barely ahead of upload
    ranking = Ranking(files=RANKING.files, symbols=(LOGIN, near_tie, UPLOAD))
    adapter = HttpReranker(server.url, "m", top_n=3)  # the gateway's default weight, 0.25
    await adapter.start()
    try:
        reranked = await adapter.rerank(QUESTION, ranking, CODE)
    finally:
        await adapter.stop()
    # the endpoint prefers upload: enough to break a near tie, not to overturn a clear leader
    assert [s.symbol.name for s in reranked.symbols] == ["login", "upload", "format_size"]
    assert reranked.symbols[1].evidence[0].signal == "rerank"


async def test_a_ranking_of_one_symbol_is_not_sent(reranker: HttpReranker, server: Any) -> None:
    one = Ranking(files=RANKING.files[:1], symbols=RANKING.symbols[:1])
    assert await reranker.rerank(QUESTION, one, CODE) == one
    assert server.requests == []


@pytest.mark.skipif(
    not os.environ.get("LOCUS_TEST_RERANK_URL"),
    reason="no rerank endpoint: set LOCUS_TEST_RERANK_URL (and LOCUS_TEST_RERANK_MODEL), "
    "e.g. http://gpu-host:8000/v1 of `vllm serve BAAI/bge-reranker-v2-m3`",
)
async def test_a_real_rerank_endpoint_puts_the_relevant_code_first() -> None:
    adapter = HttpReranker(
        os.environ["LOCUS_TEST_RERANK_URL"],
        os.environ.get("LOCUS_TEST_RERANK_MODEL", "BAAI/bge-reranker-v2-m3"),
        api_key=os.environ.get("LOCUS_TEST_RERANK_API_KEY", ""),
        timeout_seconds=60,
        weight=math.inf,
    )
    await adapter.start()
    try:
        reranked = await adapter.rerank(QUESTION, RANKING, CODE)
    finally:
        await adapter.stop()
    assert reranked.symbols[0].symbol.name == "upload"
    assert sorted(s.symbol.name for s in reranked.symbols) == ["format_size", "login", "upload"]
