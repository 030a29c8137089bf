"""Locate, Ask and Search end to end on a scanned sample project, against the real ingestion,
ast, retrieval, impact and answer services (each test skips while a service it needs is not
installed yet)."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from gateway_calls import wait_for_record
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.ast.settings import AstSettings
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.features import vector_scored_symbols
from locus.gateway.domain.learned_ranking import LearnedRanking, RankerModel
from locus.gateway.domain.ranking import RankingV1
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder
from locus.v1 import answer_pb2, gateway_pb2, ingestion_pb2, retrieval_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench" / "ranker"))
from vectors import symbol_similarity  # the training data's own code

MODEL_DIR = Path(__file__).resolve().parents[3] / ".locus" / "models" / "all-minilm-l6-v2"

pytestmark = pytest.mark.integration

STACK_TRACE = """Checkout fails with this:
```
Traceback (most recent call last):
  File "/srv/shop/src/shop/orders.py", line 19, in place_order
    charge_card(customer_id, total)
  File "/srv/shop/src/shop/payments.py", line 10, in charge_card
    raise PaymentDeclined(f"invalid amount {amount}")
shop.payments.PaymentDeclined: invalid amount 0
```"""


@pytest.fixture
async def scanned(stack, gateway, sample_tree: Path) -> Any:
    """The sample project, scanned and indexed by every running stage."""
    stack.require("ingestion", "ast", "retrieval")
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    return await gateway.stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=project.name))


async def test_locate_ranks_the_symbol_the_question_names(stack, gateway, scanned) -> None:
    request_id = f"locate-{uuid.uuid4().hex[:8]}"
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=scanned.name,
            question="Why does place_order charge the card before the order is saved?",
        ),
        metadata=(("x-request-id", request_id),),
    )
    assert response.request_id == request_id
    assert response.snapshot_id == scanned.latest_snapshot_id
    top = response.symbols[0]
    assert top.symbol.qualified_name.endswith("OrderService.place_order")
    assert top.symbol.location.relative_path == "src/shop/orders.py"
    assert top.symbol.location.start_line >= 1
    assert top.symbol.location.end_line >= top.symbol.location.start_line
    signals = {e.signal for e in top.evidence}
    assert "identifier" in signals
    assert signals & {"bm25", "vector"}
    assert response.files[0].relative_path == "src/shop/orders.py"
    # Each file names its project, as a scoped Locate's do.
    assert {(f.project_id, f.project_name) for f in response.files} == {
        (scanned.project_id, scanned.name)
    }
    paths = [f.relative_path for f in response.files]
    if "tests/test_orders.py" in paths:
        assert paths.index("tests/test_orders.py") > paths.index("src/shop/orders.py")
    if "impact" in stack.running:
        assert response.impact.symbols or response.impact.files

    record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
    assert (record.kind, record.status, record.project_id) == (
        "locate",
        "completed",
        scanned.project_id,
    )


async def test_the_shipped_learned_ranker_serves_locate_and_its_candidates_rank_the_same(
    start_gateway, scanned
) -> None:
    gateway = await start_gateway(settings_update={"ranker": "learned"})
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=scanned.project_id,
            question="Why does place_order charge the card before the order is saved?",
            include_candidates=True,
        )
    )
    model = RankerModel.load()
    assert response.ranker == f"learned:{model.version}"
    assert response.files[0].relative_path == "src/shop/orders.py"
    assert response.symbols[0].symbol.qualified_name.endswith("OrderService.place_order")
    # The dump is the training material: ranked offline by the same code, it gives the order
    # the gateway served.
    _, ranking_input = candidates_from_json(json.loads(response.candidates_json))
    # Retrieval's whole-file list came through: each file once, the orders module first.
    whole = [m.relative_path for m in ranking_input.whole_file_hits]
    assert whole[0] == "src/shop/orders.py"
    assert len(whole) == len(set(whole))
    # So did each part's: a one-line question is its own title; its opening is the first
    # fifth of its words ("Why does place_order").
    parts = ranking_input.whole_file_parts
    assert list(parts) == ["title", "opening"]
    assert parts["title"] == ranking_input.whole_file_hits
    opening = [m.relative_path for m in parts["opening"]]
    assert {"src/shop/orders.py", "docs/orders.md"} <= set(opening[:2])  # say place_order
    assert parts["opening"] != parts["title"]
    # Each part's chunks were searched alone, by BM25: the title of a one-line question is the
    # question, so its list is the question's lexical list, rank for rank.
    part_chunks = ranking_input.part_chunks
    assert list(part_chunks) == ["title", "opening"]
    title = part_chunks["title"]
    assert [hit.rank for hit in title] == list(range(1, len(title) + 1))
    listed = {(h.relative_path, h.start_line, h.end_line, h.rank) for h in title}
    lexical = [c for c in ranking_input.chunks if c.lexical_rank]
    assert lexical
    assert {(c.relative_path, c.start_line, c.end_line, c.lexical_rank) for c in lexical} <= listed
    assert part_chunks["opening"] != title
    offline = LearnedRanking(model, RankingV1()).rank(ranking_input)
    assert [f.relative_path for f in offline.files] == [f.relative_path for f in response.files]
    assert [s.symbol.node_id for s in offline.symbols] == [
        s.symbol.node_id for s in response.symbols
    ]
    # Without asking, no dump travels.
    plain = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id=scanned.project_id, question="place_order")
    )
    assert plain.candidates_json == ""


async def located_candidates(gateway: Any, project_id: str, question: str) -> tuple[str, Any]:
    """Locate with ``include_candidates``: the question and the ranking's input as dumped."""
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id=project_id, question=question, include_candidates=True)
    )
    return candidates_from_json(json.loads(response.candidates_json))


async def test_every_function_of_a_large_best_file_is_a_candidate(
    stack, gateway, sample_tree: Path
) -> None:
    # A module of 260 functions, as header-only libraries and utils modules have: the outline
    # of a best file used to stop at its 200th callable, so a fix in the rest could not be
    # ranked unless a search hit happened to cite it.
    stack.require("ingestion", "ast", "retrieval")
    (sample_tree / "src/shop/steps.py").write_text(
        "".join(f"def step_{n:03d}(value):\n    return value + {n}\n\n\n" for n in range(260))
    )
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    _, ranking_input = await located_candidates(
        gateway, project.name, "step_000 returns the wrong value"
    )
    outlined = [
        s.name for s in ranking_input.file_symbols if s.relative_path == "src/shop/steps.py"
    ]
    assert outlined == [f"step_{n:03d}" for n in range(260)]


async def test_the_training_datas_vector_similarity_is_what_the_stack_computes(
    gateway, scanned, sample_tree: Path
) -> None:
    """bench/ranker/vectors.py gives dumps collected without vectors the similarity Locate gets
    from retrieval's ScoreSymbols; it must be the same numbers, or the model would be trained
    on features the gateway never sees."""
    question, request = await located_candidates(
        gateway, scanned.project_id, "A card is charged twice when the payment is declined"
    )
    assert request.symbol_similarity  # the scan is embedded: every scored symbol has a vector
    symbols = vector_scored_symbols(request, RankingV1())
    contents = {s.relative_path: (sample_tree / s.relative_path).read_bytes() for s in symbols}
    embedder = OnnxEmbedder(MODEL_DIR, threads=1)
    embedder.load()
    offline, embedded = symbol_similarity(
        question, symbols, contents, AstSettings().chunking_policy, embedder, {}
    )
    assert embedded > 0
    assert set(offline) == set(request.symbol_similarity)
    for node_id, similarity in request.symbol_similarity.items():
        assert offline[node_id] == pytest.approx(similarity, abs=1e-3), node_id


async def test_locate_follows_a_stack_trace(gateway, scanned) -> None:
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(project_id=scanned.project_id, question=STACK_TRACE)
    )
    top = response.symbols[0]
    assert top.symbol.name in ("charge_card", "place_order")
    assert "stacktrace" in {e.signal for e in top.evidence}
    assert {f.relative_path for f in response.files[:2]} == {
        "src/shop/payments.py",
        "src/shop/orders.py",
    }


async def test_a_question_in_chinese_locates_the_code_its_comments_describe(
    stack, gateway, sample_tree: Path
) -> None:
    # Reports are written in the team's language. One in Chinese ("the input box is too small,
    # multi-line input is inconvenient") names no identifier; the code says the same in its
    # comments. It used to be a few overlong words that matched nothing: no location at all.
    stack.require("ingestion", "ast", "retrieval")
    (sample_tree / "src/shop/ui.py").write_text(
        "def input_box_height(lines):\n"
        '    """输入框的高度：多行输入时随内容自动调整。"""\n'
        "    return max(2, min(lines, 12))\n"
    )
    project = await gateway.create_project(sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=project.name, question="[建议]input框还是太小了，多行输入还是不方便"
        )
    )
    assert response.files[0].relative_path == "src/shop/ui.py"
    assert response.symbols[0].symbol.name == "input_box_height"


async def test_locate_within_a_path_prefix_and_limits(gateway, scanned) -> None:
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=scanned.name,
            question="how is a card charged or refunded",
            path_prefix="src/shop/payments",
            max_files=1,
            max_symbols=2,
        )
    )
    assert [f.relative_path for f in response.files] == ["src/shop/payments.py"]
    assert 1 <= len(response.symbols) <= 2
    assert all(s.symbol.location.relative_path == "src/shop/payments.py" for s in response.symbols)


async def test_tests_come_back_when_asked_for(gateway, scanned) -> None:
    response = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=scanned.name,
            question="which test checks that placing an order charges the card",
        )
    )
    assert "tests/test_orders.py" in [f.relative_path for f in response.files]


async def test_search_is_delegated_and_recorded(gateway, scanned) -> None:
    request_id = f"search-{uuid.uuid4().hex[:8]}"
    response = await gateway.stub.Search(
        retrieval_pb2.SearchRequest(
            query="charge_card",
            filters=retrieval_pb2.SearchFilters(project_id=scanned.name),
            top_k=5,
        ),
        metadata=(("x-request-id", request_id),),
    )
    assert response.hits
    assert {h.chunk.location.project_id for h in response.hits} <= {scanned.project_id}
    record = await gateway.stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
    assert (record.kind, record.status) == ("search", "completed")


async def test_ask_streams_located_then_the_answer_then_one_final(stack, gateway, scanned) -> None:
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
    assert kinds[0] == "located"
    assert kinds.count("final") == 1
    assert kinds[-1] == "final"
    assert {e.request_id for e in events} == {request_id}
    assert events[0].located.symbols
    text = "".join(e.text.text for e in events if e.WhichOneof("event") == "text")
    citations = [e.citation for e in events if e.WhichOneof("event") == "citation"]

    record = await wait_for_record(gateway, request_id)
    assert record.kind == "ask"
    expected = {
        answer_pb2.FINAL_STATUS_FINISHED: "completed",
        answer_pb2.FINAL_STATUS_FAILED: "failed",
        answer_pb2.FINAL_STATUS_CANCELLED: "cancelled",
    }[events[-1].final.status]
    assert record.status == expected
    assert record.answer_text == text
    assert list(record.citations) == citations


async def test_a_cancelled_ask_is_never_left_running(stack, gateway, scanned) -> None:
    stack.require("answer")
    request_id = f"cancel-{uuid.uuid4().hex[:8]}"
    call = gateway.stub.Ask(
        gateway_pb2.AskRequest(project_id=scanned.name, question="Explain the order flow."),
        metadata=(("x-request-id", request_id),),
    )
    first = await call.read()
    assert first.WhichOneof("event") == "located"
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call.read()
    assert await call.code() == grpc.StatusCode.CANCELLED
    record = await wait_for_record(gateway, request_id)
    assert record.status in ("cancelled", "completed")


async def test_every_hop_of_an_ask_is_one_trace_with_the_request_id(
    stack, start_gateway, git_sample_tree: Path
) -> None:
    stack.require("ingestion", "ast", "retrieval", "impact", "answer")
    spans = InMemorySpanExporter()
    gateway = await start_gateway(exporters=[spans])
    project = await gateway.create_project(git_sample_tree)
    job = await gateway.scan_and_wait(project.name)
    assert job.state == ingestion_pb2.SCAN_STATE_COMPLETED, job.error
    spans.clear()
    request_id = f"traced-ask-{uuid.uuid4().hex[:8]}"
    trace_id = uuid.uuid4().hex
    async for _ in gateway.stub.Ask(
        gateway_pb2.AskRequest(project_id=project.name, question="What does place_order do?"),
        metadata=(
            ("x-request-id", request_id),
            ("traceparent", f"00-{trace_id}-{'2' * 16}-01"),
        ),
    ):
        pass
    await wait_for_record(gateway, request_id)

    finished = {s.name: s for s in spans.get_finished_spans()}
    for hop in (
        "/locus.v1.IngestionService/GetProject",
        "/locus.v1.RetrievalService/Search",
        "/locus.v1.AstService/Enrich",
        "/locus.v1.AstService/ListFileSymbols",  # the outline candidates (learned ranker)
        "/locus.v1.IngestionService/ScoreFileHistory",  # the candidates' change history
        "/locus.v1.ImpactService/Compute",
        "/locus.v1.AnswerService/Generate",
    ):
        span = finished.get(hop)
        assert span is not None, f"no finished client span for {hop}: {sorted(finished)}"
        assert format(span.context.trace_id, "032x") == trace_id
        assert span.attributes is not None
        assert span.attributes["locus.request_id"] == request_id
        assert span.status.is_ok, (hop, span.status)

    # The source is a git work tree: the ranking had its history (two commits; payments.py
    # changed in both, and the newest one's message matches the question).
    spans.clear()
    locate_trace = uuid.uuid4().hex
    located = await gateway.stub.Locate(
        gateway_pb2.LocateRequest(
            project_id=project.name, question="a card is charged twice", include_candidates=True
        ),
        metadata=(
            ("x-request-id", f"{request_id}-locate"),
            ("traceparent", f"00-{locate_trace}-{'3' * 16}-01"),
        ),
    )
    _, ranked = candidates_from_json(json.loads(located.candidates_json))
    assert ranked.history_commits == 2
    history = {item.relative_path: item for item in ranked.file_history}
    assert history["src/shop/payments.py"].commits == 2
    assert history["src/shop/payments.py"].message_score > 0
    # The vectors are in (the scan is embedded): retrieval scored the best candidates' chunks
    # against the question, in the same trace, with the request id.
    assert ranked.symbol_similarity
    assert all(-1.0 <= value <= 1.0 for value in ranked.symbol_similarity.values())
    candidates = (
        {s.node_id for s in ranked.file_symbols}
        | {c.symbol.node_id for c in ranked.chunks if c.symbol is not None}
        | {s.node_id for s in ranked.named_symbols}
        | {n.symbol.node_id for n in ranked.graph_neighbors}
    )
    assert set(ranked.symbol_similarity) <= candidates
    scored = {s.name: s for s in spans.get_finished_spans()}.get(
        "/locus.v1.RetrievalService/ScoreSymbols"
    )
    assert scored is not None
    assert format(scored.context.trace_id, "032x") == locate_trace
    assert scored.attributes is not None
    assert scored.attributes["locus.request_id"] == f"{request_id}-locate"
    assert scored.status.is_ok


async def test_questions_beyond_the_admission_limits_are_shed_at_once(
    stack, start_gateway, scanned
) -> None:
    """One Locate at a time and none waiting: of six asked together, the ones that find no
    slot fail at once with RESOURCE_EXHAUSTED and a message that says to retry, never with a
    deadline; the admitted one is answered."""
    gateway = await start_gateway(
        settings_update={"max_concurrent_questions": 1, "max_queued_questions": 0}
    )
    request = gateway_pb2.LocateRequest(
        project_id=scanned.name, question="where is the order saved?"
    )
    outcomes = await asyncio.gather(
        *(gateway.stub.Locate(request, timeout=30) for _ in range(6)), return_exceptions=True
    )
    answered = [o for o in outcomes if isinstance(o, gateway_pb2.LocateResponse)]
    shed = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert answered
    assert shed
    assert len(answered) + len(shed) == 6
    assert {error.code() for error in shed} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert all("retry in a moment" in (error.details() or "") for error in shed)
