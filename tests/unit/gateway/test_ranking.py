"""RankingV1: aggregation of chunk hits to symbols and files, boosts for what the question names
(identifiers, dotted names, paths, stack-trace frames), de-ranking of tests/docs/vendored code,
evidence, limits and determinism."""

from __future__ import annotations

import pytest

from locus.gateway.domain.cue_matching import aggregate_hits, match_path
from locus.gateway.domain.document_sections import document_candidates
from locus.gateway.domain.question_cues import extract_cues
from locus.gateway.domain.ranking import RankingV1
from locus.gateway.domain.ranking_types import ChunkMatch, GraphNeighbor, RankingInput, SymbolRef
from locus.gateway.domain.ranking_weights import RankingWeights

pytestmark = pytest.mark.unit


def symbol(
    qualified_name: str,
    path: str = "src/shop/orders.py",
    lines: tuple[int, int] = (1, 20),
    kind: str = "function",
) -> SymbolRef:
    module = path.removesuffix(".py").replace("/", ".")
    scope = qualified_name.removeprefix(module + ".") if qualified_name.startswith(module) else ""
    return SymbolRef(
        node_id=f"n:{path}:{qualified_name}",
        name=qualified_name.rsplit(".", 1)[-1],
        qualified_name=qualified_name,
        scope_name=scope or qualified_name.rsplit(".", 1)[-1],
        kind=kind,
        file_id=f"f:{path}",
        relative_path=path,
        language="python",
        start_line=lines[0],
        end_line=lines[1],
    )


def hit(
    rank: int,
    score: float,
    owner: SymbolRef | None,
    *,
    path: str | None = None,
    lexical_rank: int = 0,
    vector_rank: int = 0,
    lines: tuple[int, int] | None = None,
) -> ChunkMatch:
    path = path or (owner.relative_path if owner else "src/shop/orders.py")
    start, end = lines or ((owner.start_line, owner.end_line) if owner else (1, 10))
    return ChunkMatch(
        chunk_id=f"c{rank}",
        file_id=f"f:{path}",
        relative_path=path,
        language="python",
        start_line=start,
        end_line=end,
        rank=rank,
        score=score,
        lexical_rank=lexical_rank,
        vector_rank=vector_rank,
        lexical_score=7.5 if lexical_rank else 0.0,
        vector_score=0.61 if vector_rank else 0.0,
        symbol=owner,
    )


def rank(  # type: ignore[no-untyped-def]
    question: str,
    chunks: list[ChunkMatch],
    weights: RankingWeights | None = None,
    **options: object,
):
    return RankingV1(weights).rank(
        RankingInput(cues=extract_cues(question), chunks=chunks, **options)  # type: ignore[arg-type]
    )


PLACE = symbol("src.shop.orders.OrderService.place_order", lines=(14, 21), kind="method")
CANCEL = symbol("src.shop.orders.OrderService.cancel_order", lines=(23, 26), kind="method")
CHARGE = symbol("src.shop.payments.charge_card", "src/shop/payments.py", (8, 12))
TEST_PLACE = symbol(
    "tests.test_orders.test_place_order_charges_card", "tests/test_orders.py", (4, 6)
)


def test_aggregate_hits_is_max_plus_a_capped_bonus() -> None:
    assert aggregate_hits([], 0.15, 0.45) == 0.0
    assert aggregate_hits([0.5], 0.15, 0.45) == 0.5
    assert aggregate_hits([0.2, 1.0, 0.6], 0.15, 0.45) == pytest.approx(1.0 + 0.15 * 0.8)
    assert aggregate_hits([1.0] * 20, 0.15, 0.45) == pytest.approx(1.45)


@pytest.mark.parametrize(
    ("cue", "path", "how"),
    [
        ("src/shop/orders.py", "src/shop/orders.py", "exact"),
        ("./src/shop/orders.py", "src/shop/orders.py", "exact"),
        ("/home/ci/work/shop/src/shop/orders.py", "src/shop/orders.py", "exact"),
        ("shop/orders.py", "src/shop/orders.py", "suffix"),
        ("orders.py", "src/shop/orders.py", "basename"),
        ("src/shop", "src/shop/orders.py", "directory"),
        ("shop/", "src/shop/orders.py", "directory"),
        ("rders.py", "src/shop/orders.py", ""),
        ("/usr/lib/python3.11/asyncio/base_events.py", "src/base_events.py", ""),
        ("/venv/lib/python3.6/site-packages/shop/orders.py", "src/shop/orders.py", "suffix"),
        ("/venv/lib/site-packages/shop/api/orders.py", "src/shop/orders.py", ""),
        ("payments.py", "src/shop/orders.py", ""),
        ("", "src/shop/orders.py", ""),
    ],
)
def test_match_path(cue: str, path: str, how: str) -> None:
    assert match_path(cue, path) == how


def test_chunk_hits_aggregate_to_symbols_and_files() -> None:
    ranking = rank(
        "how are orders handled",
        [
            hit(1, 0.030, CHARGE),
            hit(2, 0.029, PLACE, lines=(14, 17)),
            hit(3, 0.028, PLACE, lines=(18, 21)),
            hit(4, 0.027, CANCEL),
        ],
        RankingWeights(file_context=0.0, name_words=0.0),
    )
    assert [s.symbol.name for s in ranking.symbols] == [
        "place_order",
        "charge_card",
        "cancel_order",
    ]
    place = ranking.symbols[0]
    assert place.chunk_ids == ("c2", "c3")
    assert any(e.signal == "multi_hit" and e.detail == "2 matching chunks" for e in place.evidence)
    assert [f.relative_path for f in ranking.files] == [
        "src/shop/orders.py",
        "src/shop/payments.py",
    ]
    orders = ranking.files[0]
    assert [s.symbol.name for s in orders.symbols] == ["place_order", "cancel_order"]
    assert orders.chunk_ids == ("c2", "c3", "c4")


def test_retrieval_evidence_names_the_lists_and_lines() -> None:
    ranking = rank("orders", [hit(1, 0.032, PLACE, lexical_rank=1, vector_rank=3)])
    signals = {e.signal: e for e in ranking.symbols[0].evidence}
    assert signals["bm25"].detail == "lines 14-21: lexical rank 1 (BM25 7.50)"
    assert signals["vector"].detail == "lines 14-21: vector rank 3 (similarity 0.61)"
    assert signals["bm25"].chunk_id == "c1"
    assert signals["bm25"].weight + signals["vector"].weight == pytest.approx(1.0, abs=1e-3)
    assert signals["bm25"].weight > signals["vector"].weight


def test_an_exact_identifier_outranks_better_retrieval() -> None:
    chunks = [hit(1, 0.033, CHARGE), hit(2, 0.016, CANCEL)]
    ranking = rank("why does cancel_order not refund?", chunks)
    assert ranking.symbols[0].symbol == CANCEL
    identifier = ranking.symbols[0].evidence[0]
    assert (identifier.signal, identifier.detail) == ("identifier", "`cancel_order` is its name")
    assert ranking.files[0].relative_path == "src/shop/orders.py"
    assert any(e.signal == "identifier" for e in ranking.files[0].evidence)


def test_identifiers_match_ignoring_case_with_less_weight() -> None:
    weights = RankingWeights()
    ranking = rank("what calls `Charge_Card`?", [hit(1, 0.03, CHARGE)])
    identifier = ranking.symbols[0].evidence[0]
    assert identifier.detail == "`Charge_Card` is its name (ignoring case)"
    assert identifier.weight == weights.identifier_casefold


def test_dotted_names_match_qualified_and_scope_names() -> None:
    chunks = [hit(1, 0.033, CANCEL), hit(2, 0.020, PLACE)]
    for question in (
        "explain OrderService.place_order",
        "explain src.shop.orders.OrderService.place_order",
    ):
        ranking = rank(question, chunks)
        assert ranking.symbols[0].symbol == PLACE
        assert ranking.symbols[0].evidence[0].signal == "dotted_name"


def test_named_files_are_boosted_with_their_symbols() -> None:
    chunks = [hit(1, 0.033, PLACE), hit(2, 0.020, CHARGE)]
    ranking = rank("what happens in src/shop/payments.py when a card is declined?", chunks)
    assert ranking.files[0].relative_path == "src/shop/payments.py"
    path_evidence = ranking.files[0].evidence[0]
    assert path_evidence.signal == "path"
    assert "src/shop/payments.py (exact match)" in path_evidence.detail
    assert ranking.symbols[0].symbol == CHARGE
    assert any(e.detail == "its file is named in the question" for e in ranking.symbols[0].evidence)


def test_a_stack_trace_frame_points_at_the_enclosing_symbol() -> None:
    question = (
        'Traceback (most recent call last):\n  File "/srv/shop/src/shop/orders.py", '
        "line 19, in place_order\n    charge_card(customer_id, total)\nboom"
    )
    chunks = [hit(1, 0.033, CANCEL), hit(2, 0.030, CHARGE), hit(3, 0.020, PLACE)]
    ranking = rank(question, chunks)
    assert ranking.symbols[0].symbol == PLACE
    frame = next(e for e in ranking.symbols[0].evidence if e.signal == "stacktrace")
    assert frame.detail == "frame /srv/shop/src/shop/orders.py:19 is inside it"
    assert ranking.files[0].relative_path == "src/shop/orders.py"
    assert any(e.signal == "stacktrace" for e in ranking.files[0].evidence)


def test_a_frame_function_still_matches_when_lines_moved() -> None:
    question = 'File "src/shop/orders.py", line 90, in cancel_order'
    ranking = rank(question, [hit(1, 0.033, PLACE), hit(2, 0.020, CANCEL)])
    assert ranking.symbols[0].symbol == CANCEL
    assert any(
        e.detail
        == "frame src/shop/orders.py:90 names cancel_order (the line is outside its lines 23-26)"
        for e in ranking.symbols[0].evidence
    )


def test_tests_are_de_ranked_unless_asked_for() -> None:
    chunks = [hit(1, 0.033, TEST_PLACE), hit(2, 0.025, PLACE)]
    default = rank("where do we charge the card when placing an order", chunks)
    assert default.symbols[0].symbol == PLACE
    assert default.files[0].relative_path == "src/shop/orders.py"
    penalty = default.symbols[1].evidence[-1]
    assert penalty.signal == "path_role"
    assert penalty.detail == "test path, ranked lower (x0.35)"
    assert penalty.weight < 0

    included = rank("where do we charge the card", chunks, include_tests=True)
    assert included.symbols[0].symbol == TEST_PLACE
    about_tests = rank("which test covers charging the card", chunks)
    assert about_tests.symbols[0].symbol == TEST_PLACE


@pytest.mark.parametrize(
    "path", ["docs/orders.md", "examples/orders.py", "vendor/shop/orders.py", "api/orders_pb2.py"]
)
def test_docs_examples_vendored_and_generated_code_are_de_ranked(path: str) -> None:
    elsewhere = symbol("orders_copy", path, (1, 10))
    ranking = rank("how is an order placed", [hit(1, 0.033, elsewhere), hit(2, 0.02, PLACE)])
    assert ranking.files[0].relative_path == "src/shop/orders.py"
    # include_tests lifts the test penalty only
    ranking = rank(
        "how is an order placed",
        [hit(1, 0.033, elsewhere), hit(2, 0.02, PLACE)],
        include_tests=True,
    )
    assert ranking.files[0].relative_path == "src/shop/orders.py"


def test_a_file_the_question_names_is_not_de_ranked() -> None:
    doc_chunk = hit(1, 0.020, None, path="docs/orders.md")
    ranking = rank("is docs/orders.md up to date?", [doc_chunk, hit(2, 0.033, PLACE)])
    assert ranking.files[0].relative_path == "docs/orders.md"
    assert not any(e.signal == "path_role" for e in ranking.files[0].evidence)


def test_symbols_found_by_name_only_are_ranked() -> None:
    refund = symbol("src.shop.payments.refund_payment", "src/shop/payments.py", (15, 16))
    ranking = rank(
        "does refund_payment talk to the bank?",
        [hit(1, 0.033, PLACE)],
        named_symbols=[refund],
    )
    assert ranking.symbols[0].symbol == refund
    assert ranking.symbols[0].chunk_ids == ()
    assert [e.signal for e in ranking.symbols[0].evidence] == ["identifier", "file"]
    assert {f.relative_path for f in ranking.files} == {
        "src/shop/orders.py",
        "src/shop/payments.py",
    }


def test_chunks_without_a_symbol_count_for_their_file() -> None:
    ranking = rank("orders", [hit(1, 0.03, None, path="src/shop/orders.py")])
    assert ranking.symbols == ()
    assert ranking.files[0].relative_path == "src/shop/orders.py"
    assert ranking.files[0].chunk_ids == ("c1",)


def test_modules_rank_below_their_functions() -> None:
    module = symbol("src.shop.orders", kind="module", lines=(1, 26))
    ranking = rank("orders", [hit(1, 0.03, module, lines=(1, 5)), hit(2, 0.03, PLACE)])
    assert [s.symbol.kind for s in ranking.symbols] == ["method", "module"]


def test_limits() -> None:
    symbols = [symbol(f"src.shop.orders.f{i}", lines=(i * 10, i * 10 + 5)) for i in range(8)]
    chunks = [hit(i + 1, 0.03 - i * 0.001, s) for i, s in enumerate(symbols)]
    chunks.append(hit(20, 0.001, CHARGE))
    ranking = rank("orders", chunks, max_files=1, max_symbols=3)
    assert [s.symbol.name for s in ranking.symbols] == ["f0", "f1", "f2"]
    assert [f.relative_path for f in ranking.files] == ["src/shop/orders.py"]
    assert len(ranking.files[0].symbols) == RankingWeights().symbols_per_file


def test_ties_are_broken_deterministically() -> None:
    first = symbol("src.shop.a.same", "src/shop/a.py", (5, 9))
    second = symbol("src.shop.b.same", "src/shop/b.py", (1, 3))
    chunks = [hit(2, 0.03, second), hit(1, 0.03, first)]
    for ordering in (chunks, list(reversed(chunks))):
        ranking = rank("same", ordering)
        assert [s.symbol.relative_path for s in ranking.symbols] == [
            "src/shop/a.py",
            "src/shop/b.py",
        ]


def test_evidence_is_bounded_and_cues_come_first() -> None:
    chunks = [
        hit(i + 1, 0.03, PLACE, lexical_rank=i + 1, vector_rank=i + 2, lines=(14 + i, 14 + i))
        for i in range(10)
    ]
    ranking = rank("place_order", chunks)
    evidence = ranking.symbols[0].evidence
    assert len(evidence) == RankingWeights().max_evidence
    assert evidence[0].signal == "identifier"


def test_weights_are_tunable() -> None:
    chunks = [hit(1, 0.033, CHARGE), hit(2, 0.016, CANCEL)]
    no_identifier_boost = RankingV1(RankingWeights(identifier=0.0))
    ranking = no_identifier_boost.rank(
        RankingInput(cues=extract_cues("why does cancel_order not refund?"), chunks=chunks)
    )
    assert ranking.symbols[0].symbol == CHARGE


def test_nothing_in_nothing_out() -> None:
    ranking = rank("anything", [])
    assert (ranking.files, ranking.symbols) == ((), ())


def test_a_module_path_the_question_imports_boosts_its_file() -> None:
    other = symbol("src.shop.refunds.refund", "src/shop/refunds.py", (1, 9))
    chunks = [hit(1, 0.033, other), hit(2, 0.030, CHARGE)]
    plain = rank("charging fails for large amounts", chunks)
    assert plain.files[0].relative_path == "src/shop/refunds.py"
    imported = rank(
        "charging fails:\n```python\nfrom shop.payments import charge_card\n```", chunks
    )
    assert imported.files[0].relative_path == "src/shop/payments.py"
    assert any(e.signal == "module" for e in imported.files[0].evidence)


def test_a_method_of_a_named_class_ranks_above_a_namesake_elsewhere() -> None:
    place_elsewhere = symbol(
        "src.shop.carts.CartService.place_order", "src/shop/carts.py", (3, 9), kind="method"
    )
    chunks = [hit(1, 0.030, place_elsewhere), hit(2, 0.030, PLACE)]
    ranking = rank("OrderService charges twice when an order is placed", chunks)
    assert ranking.symbols[0].symbol == PLACE
    assert any(e.signal == "member" for e in ranking.symbols[0].evidence)


def test_words_of_a_symbol_name_in_the_question_lift_it_within_its_file() -> None:
    chunks = [hit(1, 0.030, PLACE), hit(2, 0.029, CANCEL)]
    ranking = rank("cancelling an order leaves the payment captured", chunks)
    assert ranking.symbols[0].symbol == CANCEL
    evidence = next(e for e in ranking.symbols[0].evidence if e.signal == "name_words")
    assert "cancel" in evidence.detail


def test_an_identifier_many_symbols_share_boosts_each_less() -> None:
    namesakes = [
        symbol(f"src.shop.m{i}.Handler.close", f"src/shop/m{i}.py", (1, 5), kind="method")
        for i in range(4)
    ]
    unique = symbol("src.shop.orders.close_ledger", lines=(30, 40))
    ranking = rank("`close` and `close_ledger` both leak", [], named_symbols=[*namesakes, unique])
    assert ranking.symbols[0].symbol == unique
    shared = next(s for s in ranking.symbols if s.symbol.name == "close")
    identifier = next(e for e in shared.evidence if e.signal == "identifier")
    assert identifier.weight == pytest.approx(RankingWeights().identifier_plain_word / 2)
    assert "4 symbols have it" in identifier.detail


def test_symbols_of_the_best_file_outrank_a_lone_hit_elsewhere() -> None:
    chunks = [
        hit(1, 0.030, CHARGE),
        hit(2, 0.029, PLACE, lines=(14, 17)),
        hit(3, 0.028, PLACE, lines=(18, 21)),
        hit(4, 0.027, CANCEL),
    ]
    with_context = rank("how are orders handled", chunks)
    assert [s.symbol.name for s in with_context.symbols] == [
        "place_order",
        "cancel_order",
        "charge_card",
    ]
    cancel = with_context.symbols[1]
    assert cancel.evidence[-1].signal == "file"


def test_a_plain_word_is_a_weaker_identifier() -> None:
    put = symbol("src.shop.api.put", "src/shop/api.py", (1, 4))
    put_item = symbol("src.shop.api.put_item", "src/shop/api.py", (6, 9))
    ranking = rank("`api.put(x)` breaks `put_item(x)`", [], named_symbols=[put, put_item])
    weights = {
        s.symbol.name: next(e.weight for e in s.evidence if e.signal == "identifier")
        for s in ranking.symbols
    }
    w = RankingWeights()
    assert weights == {"put_item": w.identifier, "put": w.identifier_plain_word}


def test_a_module_the_question_imports_counts_once_through_its_file() -> None:
    # `import shop.payments` names the module three ways (dotted name, identifier, module
    # path); it is what the snippet uses, and must not outrank the method the report is about.
    payments = symbol("src.shop.payments", "src/shop/payments.py", (1, 40), kind="module")
    question = (
        "`OrderService.place_order` charges twice:\n"
        "```python\nimport shop.payments\nshop.payments.charge_card(order)\n```"
    )
    ranking = rank(question, [hit(1, 0.03, PLACE)], named_symbols=[payments])
    assert ranking.symbols[0].symbol == PLACE
    module = next(s for s in ranking.symbols if s.symbol == payments)
    assert not [e for e in module.evidence if e.signal in ("identifier", "dotted_name")]
    payments_file = next(f for f in ranking.files if f.relative_path == "src/shop/payments.py")
    assert [e.signal for e in payments_file.evidence if e.signal == "module"] == ["module"]


def test_an_identifier_inside_a_longer_name_lifts_it() -> None:
    values = symbol(
        "src.wcs.sliced.SlicedWCS.world_to_pixel_values", "src/wcs/sliced.py", (5, 30), "method"
    )
    eval_subs = symbol("src.wcs.sliced.SlicedWCS._eval_subs", "src/wcs/sliced.py", (32, 40))
    axes = symbol("src.wcs.sliced.SlicedWCS.world_axis_names", "src/wcs/sliced.py", (42, 50))
    ids = symbol("src.wcs.sliced.SlicedWCS.pixel_ids", "src/wcs/sliced.py", (52, 60))
    chunks = [
        hit(1, 0.030, axes),
        hit(2, 0.030, ids),
        hit(3, 0.029, values),
        hit(4, 0.029, eval_subs),
    ]
    ranking = rank("`world_to_pixel` and `wcs.subs(x)` are wrong for `ids`", chunks)
    assert [s.symbol for s in ranking.symbols[:2]] == [values, eval_subs]
    parts = {
        s.symbol.name: next(e for e in s.evidence if e.signal == "identifier")
        for s in ranking.symbols[:2]
    }
    assert parts["world_to_pixel_values"].detail == "`world_to_pixel` is part of its name"
    assert parts["world_to_pixel_values"].weight == pytest.approx(
        RankingWeights().identifier_part * 3 / 4
    )
    assert parts["_eval_subs"].weight == pytest.approx(RankingWeights().identifier_part / 2)
    # a name of three characters (`ids`) is too short to point inside longer names
    pixel_ids = next(s for s in ranking.symbols if s.symbol == ids)
    assert not [e for e in pixel_ids.evidence if e.signal == "identifier"]


def test_weights_can_be_overridden_by_name() -> None:
    weights = RankingWeights.with_overrides({"file_context": 0.1, "identifier_ambiguity": 0})
    assert weights.file_context == 0.1
    assert weights.identifier_ambiguity is False
    assert weights.identifier == RankingWeights().identifier


def test_graph_neighbours_of_the_best_symbols_are_ranked_with_their_reason() -> None:
    helper = symbol("src.shop.orders._reserve_stock", lines=(40, 52))
    caller = symbol("src.shop.api.post_order", "src/shop/api.py", (3, 9))
    neighbors = [
        GraphNeighbor(helper, PLACE.node_id, "calls", reverse=False),
        GraphNeighbor(caller, PLACE.node_id, "calls", reverse=True),
    ]
    chunks = [hit(1, 0.033, PLACE), hit(2, 0.020, CHARGE)]
    question = "`place_order` sells more than is in stock"
    ranking = RankingV1().rank(
        RankingInput(cues=extract_cues(question), chunks=chunks, graph_neighbors=neighbors)
    )
    names = [s.symbol.name for s in ranking.symbols]
    assert names[0] == "place_order"
    assert names.index("_reserve_stock") < names.index("post_order")  # callee before caller
    reserve = next(s for s in ranking.symbols if s.symbol.name == "_reserve_stock")
    graph = next(e for e in reserve.evidence if e.signal == "graph")
    assert graph.detail == "called by OrderService.place_order, which ranks high"

    off = RankingV1(RankingWeights(graph=0.0)).rank(
        RankingInput(cues=extract_cues(question), chunks=chunks, graph_neighbors=neighbors)
    )
    assert "_reserve_stock" not in [s.symbol.name for s in off.symbols]


def test_naming_a_class_lifts_each_method_less_the_more_are_candidates() -> None:
    members = [
        symbol(f"src.shop.orders.OrderService.m{i}", lines=(10 * i, 10 * i + 5), kind="method")
        for i in range(1, 5)
    ]
    ranking = rank("OrderService misbehaves", [hit(i, 0.03, m) for i, m in enumerate(members, 1)])
    member = next(e for e in ranking.symbols[0].evidence if e.signal == "member")
    assert member.weight == pytest.approx(RankingWeights().member_of_named / 2)


def test_a_name_the_title_uses_weighs_more_than_one_further_down() -> None:
    charge = symbol("src.shop.payments.charge_card", "src/shop/payments.py", (8, 12))
    refund = symbol("src.shop.payments.refund_payment", "src/shop/payments.py", (14, 20))
    question = "refund_payment refunds twice\n\nIt happens after charge_card retries."
    ranking = rank(question, [], named_symbols=[charge, refund])
    assert ranking.symbols[0].symbol == refund
    weights = {
        s.symbol.name: next(e.weight for e in s.evidence if e.signal == "identifier")
        for s in ranking.symbols
    }
    w = RankingWeights()
    assert weights["refund_payment"] == pytest.approx(w.identifier * (1 + w.title_name))
    assert weights["charge_card"] == pytest.approx(w.identifier)


def native_symbol(
    scope: str, kind: str, path: str, lines: tuple[int, int] = (1, 20), language: str = "rust"
) -> SymbolRef:
    """A symbol of a language whose scope names join with `::`."""
    return SymbolRef(
        node_id=f"n:{path}:{scope}",
        name=scope.rsplit("::", 1)[-1],
        qualified_name=f"crate::{scope}",
        scope_name=scope,
        kind=kind,
        file_id=f"f:{path}",
        relative_path=path,
        language=language,
        start_line=lines[0],
        end_line=lines[1],
    )


def test_scope_names_with_double_colons_match_dotted_names() -> None:
    parse = native_symbol("Parser::parse_expr", "method", "src/parser.rs", (80, 95))
    other = native_symbol("Lexer::next_token", "method", "src/lexer.rs")
    ranking = rank("`Parser.parse_expr` loops forever", [hit(1, 0.03, other), hit(2, 0.02, parse)])
    assert ranking.symbols[0].symbol == parse
    assert ranking.symbols[0].evidence[0].signal == "dotted_name"


def test_a_rust_backtrace_frame_points_at_its_method() -> None:
    parse = native_symbol("Parser::parse_expr", "method", "src/parser.rs", (80, 95))
    other = native_symbol("Lexer::next_token", "method", "src/lexer.rs")
    question = (
        "thread 'main' panicked at src/parser.rs:88:14:\nstack backtrace:\n"
        "   4: myapp::parser::Parser::parse_expr\n             at ./src/parser.rs:88:14\n"
    )
    ranking = rank(question, [hit(1, 0.03, other), hit(2, 0.02, parse)])
    assert ranking.symbols[0].symbol == parse
    assert {e.signal for e in ranking.symbols[0].evidence} >= {"stacktrace", "dotted_name"}


def test_constructors_count_as_members_of_a_named_class() -> None:
    constructor = native_symbol(
        "OrderService.OrderService", "constructor", "src/OrderService.java", language="java"
    )
    elsewhere = native_symbol("Cart.add", "method", "src/Cart.java", language="java")
    ranking = rank(
        "OrderService keeps a stale clock", [hit(1, 0.03, elsewhere), hit(2, 0.03, constructor)]
    )
    assert ranking.symbols[0].symbol == constructor
    assert any(e.signal == "member" for e in ranking.symbols[0].evidence)


@pytest.mark.parametrize("kind", ["struct", "interface", "enum", "trait"])
def test_containers_have_name_words_like_classes(kind: str) -> None:
    container = native_symbol("RetryPolicy", kind, "src/retry.rs")
    ranking = rank("the retry policy ignores the deadline", [hit(1, 0.03, container)])
    assert any(e.signal == "name_words" for e in ranking.symbols[0].evidence)


def test_a_namespace_is_scored_like_a_module() -> None:
    namespace = native_symbol("detail", "namespace", "include/fmt/format.h", (1, 900), "cpp")
    function = native_symbol("detail::write", "method", "include/fmt/format.h", (40, 60), "cpp")
    question = "#0 0x4005d4 in fmt::detail::write(int) include/fmt/format.h:50"
    ranking = rank(question, [hit(1, 0.03, namespace), hit(2, 0.03, function)])
    assert ranking.symbols[0].symbol == function
    by_symbol = {s.symbol.node_id: s for s in ranking.symbols}
    assert not any(e.signal == "stacktrace" for e in by_symbol[namespace.node_id].evidence)


UPGRADING = symbol("docs/manual.md > Manual > Upgrading", "docs/manual.md", (7, 15), kind="section")
CHECK_UPGRADE = symbol("src.shop.upgrade.check_upgrade", "src/shop/upgrade.py", (8, 11))


def test_a_documentation_question_lifts_document_sections_over_code() -> None:
    chunks = [hit(1, 0.033, CHECK_UPGRADE), hit(2, 0.030, UPGRADING)]

    asked = rank("what does the documentation say about upgrading?", chunks)
    assert asked.symbols[0].symbol == UPGRADING
    assert asked.files[0].relative_path == "docs/manual.md"
    assert not any(e.signal == "path_role" for e in asked.symbols[0].evidence)

    code = rank("where is the upgrade check implemented?", chunks)
    assert code.symbols[0].symbol == CHECK_UPGRADE
    assert code.files[0].relative_path == "src/shop/upgrade.py"
    assert code.symbols[1].evidence[-1].detail == "docs path, ranked lower (x0.4)"


def test_sections_are_candidates_only_for_documentation_questions() -> None:
    chunks = [hit(1, 0.033, UPGRADING), hit(2, 0.030, CHECK_UPGRADE)]
    named = [UPGRADING, CHECK_UPGRADE]

    asked = document_candidates(extract_cues("what do the docs say about upgrading"), chunks, named)
    assert asked == (chunks, named)

    code_chunks, code_named = document_candidates(
        extract_cues("where is the upgrade check implemented?"), chunks, named
    )
    assert [c.symbol for c in code_chunks] == [None, CHECK_UPGRADE]
    assert [c.relative_path for c in code_chunks] == ["docs/manual.md", "src/shop/upgrade.py"]
    assert code_named == [CHECK_UPGRADE]
