"""Locate's service layer against fake downstream ports: validation before any call, project
resolution and the never-scanned refusal, the requests each hop gets, the response it builds,
impact as an optional hop."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace

from locus.gateway import locating
from locus.gateway.domain.candidates import candidates_from_json
from locus.gateway.domain.errors import InvalidRequest, ProjectNotScanned, RerankerUnavailable
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import RRF_K, FileHistory
from locus.gateway.domain.requests import RequestKind
from locus.gateway.locating import LocateQuery, Locator
from locus.gateway.request_log import OpenRequest
from locus.rpc import FailedPrecondition, NotFound, Unavailable
from locus.v1 import common_pb2, retrieval_pb2

pytestmark = pytest.mark.unit

PLACE = "n:shop.orders.OrderService.place_order"  # node ids of the fixture's symbols
CHARGE = "n:shop.payments.charge_card"


async def open_request(service: Any, question: str = "q") -> OpenRequest:
    entry: OpenRequest = await service.journal.open(
        RequestKind.LOCATE, "shop", question, request_id="req-1"
    )
    return entry


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (LocateQuery("shop", "   "), "question must not be empty"),
        (LocateQuery("shop", "q" * 250_001), "the limit is 250000"),
        (LocateQuery("shop", "q", max_files=-1), "max_files must not be negative"),
        (LocateQuery("shop", "q", max_symbols=10_000), "max_symbols must be at most 200"),
        (LocateQuery("shop", "q", impact_depth=99), "impact_depth must be at most 5"),
        (LocateQuery("shop", "q", path_prefix="../x"), "without '..'"),
    ],
)
async def test_invalid_requests_call_nothing(
    service: Any, query: LocateQuery, message: str
) -> None:
    entry = await open_request(service)
    with pytest.raises(InvalidRequest, match=message):
        await service.locator.locate(query, entry)
    assert service.projects.calls == []
    assert service.search.requests == []


async def test_unknown_projects_are_not_found(service: Any) -> None:
    with pytest.raises(NotFound, match="no project 'nope'"):
        await service.locator.locate(LocateQuery("nope", "where?"), await open_request(service))


async def test_a_project_never_scanned_is_refused(service: Any) -> None:
    entry = await open_request(service)
    with pytest.raises(ProjectNotScanned) as refused:
        await service.locator.locate(LocateQuery("fresh", "where?"), entry)
    assert str(refused.value) == (
        "project fresh has not been scanned yet; run locus scan fresh --wait"
    )
    assert entry.project_id == "p_fresh"
    assert service.search.requests == []


async def test_locate_asks_each_hop_and_ranks(service: Any) -> None:
    service.search.hits = [
        ("c-charge", 0.032, 1, 2),
        ("c-place", 0.030, 2, 1),
        ("c-test", 0.029, 3, 0),
        ("c-cancel", 0.016, 0, 5),
    ]
    entry = await open_request(service)
    located = await service.locator.locate(
        LocateQuery(" shop ", "  why does `place_order` charge twice? ", path_prefix="./src/"),
        entry,
    )

    search = service.search.requests[0]
    assert search.query == "why does `place_order` charge twice?"
    assert search.mode == retrieval_pb2.SEARCH_MODE_HYBRID
    assert search.top_k == 40
    # Fused as the ranking was built (not with whatever default a deployment gave retrieval).
    assert search.rrf_k == RRF_K == 60
    assert (search.filters.project_id, search.filters.path_prefix) == ("p_shop", "src/")
    assert list(service.symbols.enrich_requests[0].chunk_ids) == [
        "c-charge",
        "c-place",
        "c-test",
        "c-cancel",
    ]
    lookups = {(r.name, r.exact, r.project_id, r.path_prefix) for r in service.symbols.lookups}
    assert lookups == {("place_order", True, "p_shop", "src/")}

    response = located.response
    assert response.request_id == "req-1"
    assert response.snapshot_id == "snap_1"
    names = [s.symbol.name for s in response.symbols]
    assert names[0] == "place_order"  # the ranking's own order is tested in test_ranking
    assert names[-1] == "test_place_order"  # de-ranked test
    assert set(names) == {"place_order", "charge_card", "cancel_order", "test_place_order"}
    top = response.symbols[0]
    assert top.symbol.location.relative_path == "src/shop/orders.py"
    assert (top.evidence[0].signal, top.evidence[0].detail) == (
        "identifier",
        "`place_order` is its name",
    )
    assert [f.relative_path for f in response.files] == [
        "src/shop/orders.py",
        "src/shop/payments.py",
        "tests/test_orders.py",
    ]
    assert [s.symbol.name for s in response.files[0].symbols] == ["place_order", "cancel_order"]

    # One call walks one hop from each seed alone (for the ranking), then impact.
    graph, impact = service.impact.requests
    assert (graph.depth, graph.each_seed) == (1, True)
    assert "n:shop.orders.OrderService.place_order" in graph.seed_node_ids
    assert not impact.each_seed
    # the impact of the ranking's top impact_seed_symbols (2)
    assert list(impact.seed_node_ids) == [s.symbol.node_id for s in response.symbols[:2]]
    assert impact.depth == service.settings.default_impact_depth
    assert [s.symbol.name for s in response.impact.symbols] == ["charge_card"]

    assert located.chunks["c-place"].text.startswith("def place_order")
    assert (entry.project_id, entry.snapshot_id) == ("p_shop", "snap_1")
    assert {"resolve_project", "search", "enrich", "rank", "graph", "impact"} <= set(
        entry.timings_ms
    )


async def test_limits_and_impact_depth_are_passed_on(service: Any) -> None:
    service.search.hits = [("c-charge", 0.03, 1, 0), ("c-place", 0.02, 2, 0)]
    located = await service.locator.locate(
        LocateQuery("shop", "orders", max_files=1, max_symbols=1, impact_depth=4),
        await open_request(service),
    )
    assert len(located.response.files) == 1
    assert len(located.response.symbols) == 1
    assert [r.depth for r in service.impact.requests][-1] == 4
    assert {r.depth for r in service.impact.requests[:-1]} == {1}


async def test_impact_is_optional(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1)]
    service.impact.error = Unavailable("impact service at 127.0.0.1:50054 is unavailable: down")
    entry = await open_request(service)
    located = await service.locator.locate(LocateQuery("shop", "orders"), entry)
    assert [s.symbol.name for s in located.response.symbols] == ["place_order"]
    assert len(located.response.impact.symbols) == 0
    assert entry.notes == [
        "graph propagation skipped: impact service at 127.0.0.1:50054 is unavailable: down",
        "impact analysis skipped: impact service at 127.0.0.1:50054 is unavailable: down",
    ]


async def test_failed_name_lookups_do_not_fail_locate(service: Any) -> None:
    service.search.hits = [("c-charge", 0.03, 1, 1)]
    service.symbols.lookup_error = Unavailable("ast down")
    located = await service.locator.locate(
        LocateQuery("shop", "is refund_payment used?"), await open_request(service)
    )
    assert [s.symbol.name for s in located.response.symbols] == ["charge_card"]


async def test_symbols_found_by_name_join_the_ranking(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1)]
    located = await service.locator.locate(
        LocateQuery("shop", "is refund_payment used?"), await open_request(service)
    )
    assert [s.symbol.name for s in located.response.symbols] == ["refund_payment", "place_order"]
    assert located.response.symbols[0].symbol.location.relative_path == "src/shop/payments.py"


async def test_signatures_and_overrides_are_no_candidates(
    service: Any, symbol_of_kind: Any
) -> None:
    """The ranking was trained on a graph without signatures (methods declared without a body,
    C/C++ prototypes) and without impact's overrides: the graph hop asks impact to walk
    definitions only (impact's own tests show the walk), and the name lookups ask for
    definitions only; a caller still joins."""
    caller = symbol_of_kind("shop.checkout.pay", "src/shop/checkout.py", "function")
    service.impact.neighbours = [(caller, common_pb2.RELATION_KIND_CALLS, True)]
    service.search.hits = [("c-charge", 0.03, 1, 1)]
    located = await service.locator.locate(
        LocateQuery("shop", "charge_card charges twice"), await open_request(service)
    )
    names = {s.symbol.qualified_name for s in located.response.symbols}
    assert "shop.checkout.pay" in names  # a caller, a graph neighbour, joins
    hops = [request for request in service.impact.requests if request.each_seed]
    assert hops
    assert all(request.without_signatures for request in hops)
    assert service.symbols.lookups
    assert all(lookup.without_signatures for lookup in service.symbols.lookups)


async def test_retrieval_errors_propagate(service: Any) -> None:
    service.search.error = Unavailable("retrieval service at 127.0.0.1:50053 is unavailable: x")
    with pytest.raises(Unavailable, match=r"retrieval service at 127\.0\.0\.1:50053"):
        await service.locator.locate(LocateQuery("shop", "orders"), await open_request(service))


async def test_retrieval_without_chunks_of_the_project_is_not_scanned(service: Any) -> None:
    service.search.error = FailedPrecondition("project p_shop has no indexed chunks yet")
    with pytest.raises(ProjectNotScanned) as refused:
        await service.locator.locate(LocateQuery("shop", "orders"), await open_request(service))
    assert str(refused.value) == (
        "project shop has not been scanned yet; run locus scan shop --wait "
        "(retrieval: project p_shop has no indexed chunks yet)"
    )


async def test_no_hits_is_an_empty_answer(service: Any) -> None:
    located = await service.locator.locate(
        LocateQuery("shop", "orders"), await open_request(service)
    )
    assert list(located.response.files) == []
    assert service.symbols.enrich_requests == []
    assert service.impact.requests == []


async def test_the_reranker_gets_the_ranking_and_the_code_that_matched(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    entry = await open_request(service)
    await service.locator.locate(LocateQuery("shop", "orders charge twice"), entry)
    ((question, ranking, texts),) = service.reranker.calls
    assert question == "orders charge twice"
    assert [s.symbol.name for s in ranking.symbols][:2] == ["place_order", "charge_card"]
    assert set(texts) >= {"c-place", "c-charge"}
    assert all(texts.values())
    assert "rerank" in entry.timings_ms


async def test_a_failing_reranker_keeps_the_ranking_with_a_note(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    service.reranker.error = RerankerUnavailable(
        "rerank endpoint http://gpu:8000/v1/rerank answered HTTP 503: overloaded"
    )
    entry = await open_request(service)
    located = await service.locator.locate(LocateQuery("shop", "orders charge twice"), entry)
    assert [s.symbol.name for s in located.response.symbols][:2] == ["place_order", "charge_card"]
    assert entry.notes == [
        "rerank skipped: rerank endpoint http://gpu:8000/v1/rerank answered HTTP 503: overloaded"
    ]


def outlining_locator(service: Any, files: int = 1) -> Locator:
    """A locator that outlines the best files, so symbols no retrieved chunk cites join in."""
    return Locator(
        service.settings.model_copy(update={"outline_files": files}),
        projects=service.projects,
        search=service.search,
        symbols=service.symbols,
        impact=service.impact,
        ranker=RankingV1(),
        reranker=service.reranker,
        tracer=trace.get_tracer("tests"),
    )


async def test_the_reranker_reads_the_own_code_of_symbols_no_retrieved_chunk_cites(
    service: Any,
) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1)]
    entry = await open_request(service)
    await outlining_locator(service).locate(LocateQuery("shop", "orders"), entry)
    ((_, ranking, texts),) = service.reranker.calls
    cancel = next(s for s in ranking.symbols if s.symbol.name == "cancel_order")
    assert not cancel.chunk_ids  # outlined, not retrieved
    assert texts[cancel.symbol.node_id] == "def cancel_order(self, order_id): ..."
    # One call, for the symbols without code only: place_order's chunk came with the hits.
    (request,) = service.symbols.text_requests
    assert request.project_id == "p_shop"
    assert cancel.symbol.node_id in request.node_ids
    assert "n:shop.orders.OrderService.place_order" not in request.node_ids
    assert len(request.node_ids) <= service.reranker.window
    assert "symbol_texts" in entry.timings_ms


async def test_a_window_wider_than_one_call_is_fetched_in_several(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locating, "SYMBOL_TEXTS_PER_CALL", 1)
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    await outlining_locator(service, files=2).locate(
        LocateQuery("shop", "orders charge"), await open_request(service)
    )
    cancel, refund = "n:shop.orders.OrderService.cancel_order", "n:shop.payments.refund_payment"
    requests = service.symbols.text_requests
    assert sorted(n for r in requests for n in r.node_ids) == [cancel, refund]
    assert all(len(r.node_ids) == 1 for r in requests)
    ((_, _, texts),) = service.reranker.calls
    assert texts[cancel] == "def cancel_order(self, order_id): ..."
    assert refund not in texts  # the fake ast holds no chunk of it


async def test_without_the_symbols_code_the_rerank_goes_on_with_a_note(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1)]
    service.symbols.texts_error = Unavailable("ast service at 127.0.0.1:50052 is unavailable")
    entry = await open_request(service)
    located = await outlining_locator(service).locate(LocateQuery("shop", "orders"), entry)
    assert located.response.symbols[0].symbol.name == "place_order"
    ((_, _, texts),) = service.reranker.calls
    assert set(texts) == {"c-place"}
    assert entry.notes == [
        "rerank documents without code: ast service at 127.0.0.1:50052 is unavailable"
    ]


async def test_no_code_is_fetched_for_a_reranker_that_reads_none(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1)]
    service.reranker.window = 0  # the default IdentityReranker
    await outlining_locator(service).locate(
        LocateQuery("shop", "orders"), await open_request(service)
    )
    assert service.symbols.text_requests == []


async def test_functions_of_the_best_files_join_the_candidates(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1)]
    located = await outlining_locator(service).locate(
        LocateQuery("shop", "orders"), await open_request(service)
    )
    names = [s.symbol.name for s in located.response.symbols]
    assert names[0] == "place_order"
    assert "cancel_order" in names  # in the same file, matched by no chunk
    (outline,) = service.symbols.outlines  # one call for the outlined files
    assert list(outline.file_ids) == [located.response.files[0].file_id]
    assert set(outline.kinds) == {
        common_pb2.SYMBOL_KIND_FUNCTION,
        common_pb2.SYMBOL_KIND_METHOD,
        common_pb2.SYMBOL_KIND_CONSTRUCTOR,
    }


async def test_the_candidates_change_history_joins_the_ranking_input(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    service.projects.histories = {"src/shop/payments.py": (7, 2, 3.5)}
    entry = await open_request(service)
    located = await service.locator.locate(
        LocateQuery("shop", "orders charge twice", include_candidates=True), entry
    )
    (asked,) = service.projects.history_requests
    assert asked.project_id == "p_shop"
    assert asked.question == "orders charge twice"
    assert set(asked.relative_paths) >= {"src/shop/orders.py", "src/shop/payments.py"}
    _, ranked = candidates_from_json(json.loads(located.response.candidates_json))
    assert ranked.history_commits == 100
    assert ranked.file_history == [FileHistory("src/shop/payments.py", 7, 2, 0.5, 3.5)]
    assert "history" in entry.timings_ms

    # The hand ranking reads no history: without a dump asked for, ingestion is not asked.
    await service.locator.locate(LocateQuery("shop", "orders charge twice"), entry)
    assert len(service.projects.history_requests) == 1


async def test_a_failing_history_leaves_the_ranking_without_it_and_notes_why(
    service: Any,
) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    service.projects.history_error = Unavailable("ingestion is unavailable: connection refused")
    entry = await open_request(service)
    located = await service.locator.locate(
        LocateQuery("shop", "orders charge twice", include_candidates=True), entry
    )
    assert [s.symbol.name for s in located.response.symbols][:2] == ["place_order", "charge_card"]
    _, ranked = candidates_from_json(json.loads(located.response.candidates_json))
    assert ranked.history_commits == 0
    assert not ranked.file_history
    assert entry.notes == ["change history skipped: ingestion is unavailable: connection refused"]


async def test_the_candidates_vector_similarity_joins_the_ranking_input(service: Any) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    service.search.similarities = {CHARGE: 0.61, PLACE: 0.42}
    entry = await open_request(service)
    located = await service.locator.locate(
        LocateQuery("shop", "orders charge twice", include_candidates=True), entry
    )
    (asked,) = service.search.score_requests
    assert asked.project_id == "p_shop"
    assert asked.query == "orders charge twice"
    assert {PLACE, CHARGE} <= set(asked.symbol_node_ids)
    assert asked.snapshot_id  # the vectors as of the snapshot Locate answers from
    _, ranked = candidates_from_json(json.loads(located.response.candidates_json))
    assert ranked.symbol_similarity == {CHARGE: 0.61, PLACE: 0.42}
    assert "vectors" in entry.timings_ms

    # A ranker that reads no vectors, without a dump asked for: retrieval is not asked.
    await service.locator.locate(LocateQuery("shop", "orders charge twice"), entry)
    assert len(service.search.score_requests) == 1


async def test_failing_vector_scores_leave_the_ranking_without_them_and_note_why(
    service: Any,
) -> None:
    service.search.hits = [("c-place", 0.03, 1, 1), ("c-charge", 0.02, 2, 2)]
    service.search.score_error = Unavailable("retrieval is unavailable: embedder not loaded")
    entry = await open_request(service)
    located = await service.locator.locate(
        LocateQuery("shop", "orders charge twice", include_candidates=True), entry
    )
    assert [s.symbol.name for s in located.response.symbols][:2] == ["place_order", "charge_card"]
    _, ranked = candidates_from_json(json.loads(located.response.candidates_json))
    assert ranked.symbol_similarity == {}
    assert entry.notes == [
        "vector similarity skipped: retrieval is unavailable: embedder not loaded"
    ]
