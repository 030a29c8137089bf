"""What a reranker sees (documents of the best symbols) and what it may change (their order,
the files following their best symbol); nothing invented, nothing dropped, scores still falling."""

from __future__ import annotations

import math

import pytest

from locus.gateway.domain.ranking_types import (
    Evidence,
    RankedFile,
    RankedSymbol,
    Ranking,
    SymbolRef,
)
from locus.gateway.domain.reranking import apply_relevance, rerank_window

pytestmark = pytest.mark.unit


def ranked(name: str, path: str, score: float, chunk: str = "") -> RankedSymbol:
    ref = SymbolRef(
        node_id=f"n:{name}",
        name=name.rsplit(".", 1)[-1],
        qualified_name=name,
        scope_name=name,
        kind="function",
        file_id=f"f:{path}",
        relative_path=path,
        language="python",
        start_line=3,
        end_line=9,
    )
    return RankedSymbol(ref, score, (Evidence("bm25", "lines 3-9", score, chunk),), (chunk,))


def file_of(path: str, score: float, symbols: list[RankedSymbol]) -> RankedFile:
    mine = tuple(s for s in symbols if s.symbol.relative_path == path)
    return RankedFile(f"f:{path}", path, "python", score, mine, (), ())


A = ranked("shop.orders.place", "src/orders.py", 3.0, "c-a")
B = ranked("shop.orders.cancel", "src/orders.py", 2.0, "c-b")
C = ranked("shop.pay.charge", "src/pay.py", 1.5, "c-c")
D = ranked("shop.mail.notify", "src/mail.py", 1.0, "c-d")
RANKING = Ranking(
    files=(
        file_of("src/orders.py", 3.5, [A, B, C, D]),
        file_of("src/pay.py", 1.6, [A, B, C, D]),
        file_of("src/mail.py", 1.1, [A, B, C, D]),
    ),
    symbols=(A, B, C, D),
)


def test_the_window_holds_the_best_symbols_with_the_code_that_matched() -> None:
    window = rerank_window(RANKING, {"c-a": "def place(order):\n    charge(order)"}, 3, 2000)
    assert window.symbols == (A, B, C)
    assert window.documents[0] == (
        "src/orders.py:3-9 function shop.orders.place\ndef place(order):\n    charge(order)"
    )
    assert window.documents[1] == "src/orders.py:3-9 function shop.orders.cancel\n"
    assert len(rerank_window(RANKING, {"c-a": "x" * 5000}, 3, 100).documents[0]) == 100


def test_a_symbol_no_retrieved_chunk_cites_is_shown_with_its_own_code() -> None:
    neighbour = RankedSymbol(A.symbol, 2.0, (), ())  # a graph neighbour: no chunk matched it
    texts = {"n:shop.orders.place": "def place(order):\n    ...", "c-a": "def place(o): pass"}
    ranking = Ranking(files=(), symbols=(neighbour, A))
    documents = rerank_window(ranking, texts, 2, 2000).documents
    header = "src/orders.py:3-9 function shop.orders.place"
    assert documents[0] == f"{header}\ndef place(order):\n    ..."
    # a chunk that matched comes first: it is the part of the symbol the question hit
    assert documents[1] == f"{header}\ndef place(o): pass"


def test_relevance_reorders_the_window_and_leaves_the_tail() -> None:
    window = rerank_window(RANKING, {}, 3, 2000)
    reranked = apply_relevance(
        RANKING, window, {0: 0.1, 1: 0.2, 2: 0.9}, "reranked by m", weight=math.inf
    )
    assert [s.symbol.name for s in reranked.symbols] == ["charge", "cancel", "place", "notify"]
    assert [s.score for s in reranked.symbols] == [3.0, 2.0, 1.5, 1.0]  # still falling
    rerank = reranked.symbols[0].evidence[0]
    assert rerank.signal == "rerank"
    assert rerank.detail == "reranked by m: relevance 0.9, was #3"
    assert rerank.weight == pytest.approx(1.5)
    assert reranked.symbols[3] == D  # below the window: untouched
    # files follow their best reranked symbol; their scores are handed out again
    assert [f.relative_path for f in reranked.files] == [
        "src/pay.py",
        "src/orders.py",
        "src/mail.py",
    ]
    assert [f.score for f in reranked.files] == [3.5, 1.6, 1.1]
    orders = reranked.files[1]
    assert [s.symbol.name for s in orders.symbols] == ["cancel", "place"]


def test_documents_the_reranker_left_out_keep_their_place_after_the_scored_ones() -> None:
    window = rerank_window(RANKING, {}, 3, 2000)
    reranked = apply_relevance(RANKING, window, {2: 0.5}, "r", weight=math.inf)
    assert [s.symbol.name for s in reranked.symbols] == ["charge", "place", "cancel", "notify"]
    assert [e.signal for e in reranked.symbols[1].evidence] == ["bm25"]
    assert sorted(s.symbol.node_id for s in reranked.symbols) == sorted(
        s.symbol.node_id for s in RANKING.symbols
    )


def test_relevance_for_a_document_never_sent_is_refused() -> None:
    window = rerank_window(RANKING, {}, 2, 2000)
    with pytest.raises(ValueError, match=r"documents \[2\] of a window of 2"):
        apply_relevance(RANKING, window, {2: 0.5}, "r", weight=math.inf)


def test_a_weighted_relevance_is_mixed_with_the_ranking_not_followed_alone() -> None:
    window = rerank_window(RANKING, {}, 3, 2000)
    relevance = {0: 0.1, 1: 0.2, 2: 0.9}  # the reranker prefers charge, then cancel
    # weight 1: charge (clearly preferred) passes cancel, not the ranking's clear leader
    mixed = apply_relevance(RANKING, window, relevance, "r", weight=1.0)
    assert [s.symbol.name for s in mixed.symbols] == ["place", "charge", "cancel", "notify"]
    assert [f.relative_path for f in mixed.files] == ["src/orders.py", "src/pay.py", "src/mail.py"]
    # the default of the gateway (0.25): a small edge does not overturn the ranking
    light = apply_relevance(RANKING, window, relevance, "r", weight=0.25)
    assert [s.symbol.name for s in light.symbols] == ["place", "cancel", "charge", "notify"]
    assert light.symbols[2].evidence[0].detail == "r: relevance 0.9, was #3"
    with pytest.raises(ValueError, match="rerank weight must be above 0"):
        apply_relevance(RANKING, window, relevance, "r", weight=0.0)
