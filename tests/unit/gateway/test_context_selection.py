"""The context bundle of an answer: the best chunk of each located symbol first, then further
chunks of the located files; citation ids C1..; only chunks that have text; a reason each."""

from __future__ import annotations

import pytest

from locus.gateway.domain.context_selection import (
    ContextChoice,
    explain,
    merge_contexts,
    select_context,
)
from locus.gateway.domain.ranking_types import (
    Evidence,
    RankedFile,
    RankedSymbol,
    Ranking,
    SymbolRef,
)

pytestmark = pytest.mark.unit


def ref(name: str, path: str = "src/shop/orders.py") -> SymbolRef:
    return SymbolRef(
        f"n:{name}", name, f"shop.{name}", name, "function", f"f:{path}", path, "python", 1, 9
    )


PLACE = RankedSymbol(
    ref("place_order"),
    2.1,
    (
        Evidence("identifier", "`place_order` is its name", 1.2),
        Evidence("bm25", "lines 1-9", 0.9, "c1"),
    ),
    ("c1", "c2"),
)
CANCEL = RankedSymbol(
    ref("cancel_order"), 0.8, (Evidence("vector", "lines 20-25", 0.8, "c3"),), ("c3",)
)
ORDERS = RankedFile(
    "f:src/shop/orders.py",
    "src/shop/orders.py",
    "python",
    2.1,
    (PLACE, CANCEL),
    (Evidence("bm25", "lines 1-9", 0.9, "c1"), Evidence("bm25", "lines 40-50", 0.4, "c9")),
    ("c1", "c9", "c2", "c3"),
)
RANKING = Ranking(files=(ORDERS,), symbols=(PLACE, CANCEL))


def test_best_chunk_of_each_symbol_then_more_of_each_file() -> None:
    chosen = select_context(RANKING, 10, has_text=lambda chunk_id: True)
    assert [(c.citation_id, c.chunk_id) for c in chosen] == [
        ("C1", "c1"),
        ("C2", "c3"),
        ("C3", "c9"),
        ("C4", "c2"),
    ]
    assert chosen[0].symbol == PLACE.symbol
    assert chosen[0].score == 2.1
    assert chosen[0].why == "identifier: `place_order` is its name; bm25: lines 1-9"
    assert chosen[2].symbol is None  # c9 is no located symbol's chunk
    assert chosen[2].why == "bm25: lines 40-50"
    assert chosen[3].symbol == PLACE.symbol


def test_the_bundle_is_bounded() -> None:
    chosen = select_context(RANKING, 2, has_text=lambda chunk_id: True)
    assert [c.chunk_id for c in chosen] == ["c1", "c3"]
    assert select_context(RANKING, 0, has_text=lambda chunk_id: True) == []


def test_chunks_without_text_are_skipped() -> None:
    chosen = select_context(RANKING, 10, has_text=lambda chunk_id: chunk_id != "c1")
    assert [c.chunk_id for c in chosen] == ["c2", "c3", "c9"]
    assert [c.citation_id for c in chosen] == ["C1", "C2", "C3"]


def test_explain_is_short() -> None:
    many = [Evidence("bm25", "x" * 300, 1.0)] * 5
    assert len(explain(many)) == 400
    assert explain([]) == ""


def test_a_scoped_context_merges_the_projects_by_score_renumbered() -> None:
    def choice(chunk_id: str, score: float) -> ContextChoice:
        return ContextChoice("C9", chunk_id, None, score, "")

    orders = [choice("o1", 0.5), choice("o2", 0.9)]  # a project's own order is kept
    telescope = [choice("t1", 0.8), choice("t2", 0.1)]
    merged = merge_contexts([orders, telescope], 3)
    assert [(order, c.chunk_id, c.citation_id) for order, c in merged] == [
        (1, "t1", "C1"),
        (0, "o1", "C2"),
        (0, "o2", "C3"),
    ]
