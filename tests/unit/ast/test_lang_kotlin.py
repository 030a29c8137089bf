"""Kotlin through the generic extractor and the real SQLite store: the `com.acme` fixture (an
interface and its implementation, a data class with a nested class and a companion object, a
top-level function, an object, a caller in another package)."""

import pytest
from language_fixtures import (
    AST_FIXTURES,
    analyse_tree,
    fixture_version,
    relation_triples,
    store_tree,
    symbols_by_name,
)

from locus.ast.adapters.store import AstStore, FileIndex
from locus.ast.domain import FileAnalysis, extract
from locus.ast.domain.language_spec import SourceRoot

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "kotlin"
BASE = "src/main/kotlin/com/acme"
CART = f"{BASE}/shop/Cart.kt"
PRICING = f"{BASE}/shop/Pricing.kt"
CHECKOUT = f"{BASE}/app/Checkout.kt"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "kotlin", source_root=SourceRoot("src/main/kotlin", ""))


def test_symbols_are_qualified_by_package(analyses: dict[str, FileAnalysis]) -> None:
    analysis = analyses[CART]
    assert (analysis.module_name, analysis.parse_errors) == ("com/acme/shop/Cart.kt", 0)
    symbols = symbols_by_name(analysis)
    expected = {
        "com.acme.shop.Cart": ("class", "Cart", 11, 25),
        "com.acme.shop.Cart.Line": ("class", "Cart.Line", 13, 13),
        "com.acme.shop.Cart.total": ("method", "Cart.total", 15, 18),
        # Companion members are called through the class, so they are named under it.
        "com.acme.shop.Cart.empty": ("method", "Cart.empty", 23, 23),
        "com.acme.shop.applyDiscount": ("function", "applyDiscount", 27, 27),
        "com.acme.shop.Carts": ("class", "Carts", 29, 31),
        "com.acme.shop.Carts.count": ("method", "Carts.count", 30, 30),
    }
    for qualified_name, (kind, scope_name, start, end) in expected.items():
        symbol = symbols[qualified_name]
        assert (symbol.kind, symbol.scope_name, symbol.start_line, symbol.end_line) == (
            kind,
            scope_name,
            start,
            end,
        ), qualified_name
    pricing = symbols_by_name(analyses[PRICING])
    assert pricing["com.acme.shop.Pricing"].kind == "interface"
    assert "com.acme.shop.Pricing.describe" in pricing
    assert pricing["com.acme.shop.Pricing.describe"].kind == "method"  # a default body
    assert pricing["com.acme.shop.Pricing.priceOf"].kind == "signature"  # abstract: no body


def test_kdoc_and_signatures(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[CART])
    cart = symbols["com.acme.shop.Cart"]
    # The KDoc follows the imports (tree-sitter-kotlin keeps it inside the import list).
    assert cart.docstring == "A shopping cart.\n\nLines are kept in insertion order."
    assert cart.signature == "data class Cart(val lines: List<Line>, private val pricing: Pricing)"
    line = symbols["com.acme.shop.Cart.Line"]
    assert (line.signature, line.docstring) == ("data class Line", "One cart line.")
    assert symbols["com.acme.shop.Cart.total"].signature == "fun total(): Long"
    assert symbols_by_name(analyses[PRICING])["com.acme.shop.Pricing"].docstring == (
        "Prices a basket in cents."
    )


def test_relations(analyses: dict[str, FileAnalysis]) -> None:
    cart = analyses[CART]
    assert ("com.acme.shop.Cart", "total", "com.acme.shop.Cart.total") in relation_triples(
        cart, "contains"
    )
    assert relation_triples(cart, "imports") == {
        (
            "com/acme/shop/Cart.kt",
            "com.acme.shop.discount.Percent",
            "com.acme.shop.discount.Percent",
        ),
        (
            "com/acme/shop/Cart.kt",
            "java.util.concurrent.atomic.AtomicLong",
            "java.util.concurrent.atomic.AtomicLong",
        ),
    }
    calls = relation_triples(cart, "calls")
    assert ("com.acme.shop.Cart.total", "subtotal", "com.acme.shop.Cart.subtotal") in calls
    assert ("com.acme.shop.Cart.total", "applyDiscount", "com.acme.shop.applyDiscount") in calls
    assert ("com.acme.shop.Cart.empty", "Cart", "com.acme.shop.Cart") in calls
    # `import ... as Counter` binds the alias.
    assert (
        "com.acme.shop.Carts.count",
        "Counter",
        "java.util.concurrent.atomic.AtomicLong",
    ) in calls
    assert relation_triples(analyses[PRICING], "inherits") == {
        ("com.acme.shop.Catalog", "Pricing", "com.acme.shop.Pricing")
    }
    checkout = relation_triples(analyses[CHECKOUT], "calls")
    assert ("com.acme.app.Checkout.run", "Cart.empty", "com.acme.shop.Cart.empty") in checkout
    assert (
        "com.acme.app.Checkout.run",
        "applyDiscount",
        "com.acme.shop.applyDiscount",
    ) in checkout


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[CART].chunks}
    total = chunks[("method", "com.acme.shop.Cart.total")]
    source = (ROOT / CART).read_text().splitlines()
    assert (total.start_line, total.end_line, total.text) == (15, 18, "\n".join(source[14:18]))
    function = chunks[("function", "com.acme.shop.applyDiscount")]
    assert (function.start_line, function.end_line) == (27, 27)
    outline = chunks[("class_header", "com.acme.shop.Cart")]
    assert "    fun total(): Long ..." in outline.text
    assert "return applyDiscount(raw)" not in outline.text


def _resolved(index: FileIndex, kind: str) -> dict[str, str]:
    return {
        r.relation.target_qualified_name: r.target_node_id
        for r in index.relations
        if r.relation.kind == kind and r.relation.target_qualified_name
    }


async def test_store_resolves_across_files_and_forgets_a_retracted_file(
    sqlite_ast_store: AstStore, analyses: dict[str, FileAnalysis]
) -> None:
    indexes = await store_tree(sqlite_ast_store, analyses, "kotlin")
    checkout = indexes[CHECKOUT]
    cart_ids = {s.qualified_name: s.node_id for s in indexes[CART].symbols}
    calls = _resolved(checkout, "calls")
    assert calls["com.acme.shop.Cart.empty"] == cart_ids["com.acme.shop.Cart.empty"]
    assert calls["com.acme.shop.applyDiscount"] == cart_ids["com.acme.shop.applyDiscount"]
    targets = {d.target_file_id for d in checkout.dependencies}
    assert fixture_version(CART, "kotlin").file_id in targets
    assert fixture_version(PRICING, "kotlin").file_id in targets  # Catalog

    assert await sqlite_ast_store.retract_file(fixture_version(CART, "kotlin", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(CHECKOUT, "kotlin").file_id)
    assert after is not None
    assert _resolved(after, "calls")["com.acme.shop.Cart.empty"] == ""
    assert fixture_version(CART, "kotlin").file_id not in {
        d.target_file_id for d in after.dependencies
    }


def test_a_call_on_a_typed_variable_is_a_method_of_its_type() -> None:
    source = b"""package com.acme.billing

class Checkout(private val ledger: Ledger) {
    fun pay(invoice: Invoice, cents: Int) {
        val card: CardPayment = payments.card()
        ledger.record(invoice)
        invoice.lines()
        card.charge(cents)
    }
}
"""
    analysis = extract("src/main/kotlin/com/acme/billing/Checkout.kt", source, "kotlin")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("ledger.record", "com.acme.billing.Ledger.record") in calls  # constructor property
    assert ("invoice.lines", "com.acme.billing.Invoice.lines") in calls  # a parameter
    assert ("card.charge", "com.acme.billing.CardPayment.charge") in calls  # val x: T


def test_nullable_types_keep_their_mark_and_a_factory_function_leaves_the_name_to_its_class() -> (
    None
):
    # picnic writes `fun Cell(content: Any?)` beside `class Cell`: both are symbols, the class
    # under the plain name, the factory as an overload (its parameter list as written).
    source = b"""package com.acme

/** Makes a cell. */
fun Cell(content: Any?, tags: List<String?>? = null): Cell? = null

class Cell {
    private fun hash(vararg args: Any?): Int = 0
}
"""
    symbols = symbols_by_name(extract("src/main/kotlin/com/acme/Cell.kt", source, "kotlin"))
    assert (symbols["com.acme.Cell"].kind, symbols["com.acme.Cell"].start_line) == ("class", 6)
    factory = symbols["com.acme.Cell(content: Any?, tags: List<String?>? = null)"]
    assert (factory.kind, factory.docstring) == ("function", "Makes a cell.")
    assert factory.signature == "fun Cell(content: Any?, tags: List<String?>? = null): Cell?"
    assert symbols["com.acme.Cell.hash"].signature == "private fun hash(vararg args: Any?): Int"


def test_a_method_called_on_a_literal_is_no_call() -> None:
    source = b'''package com.acme

fun render(): String {
    val s = """
      | rows
      """.trimMargin()
    return "x".repeat(3) + s.trim()
}
'''
    analysis = extract("src/main/kotlin/com/acme/Render.kt", source, "kotlin")
    assert {written for _, written, _ in relation_triples(analysis, "calls")} == {"s.trim"}


def test_an_extension_function_is_named_under_its_receivers_type() -> None:
    # picnic's `fun Table.renderText()`: `Table.renderText` finds it, a call on a typed value
    # resolves to it, and its parent is the type (impact resolves its bare `total()` there).
    source = b"""package com.acme.billing

class Invoice(val lines: List<Int>) {
    fun total(): Int = lines.sum()
}

/** VAT of an invoice. */
fun Invoice.vat(): Int = total() / 5

fun Style?.plus(other: Style?): Style? = other

fun report(invoice: Invoice): Int = invoice.vat()
"""
    analysis = extract("src/main/kotlin/com/acme/billing/Invoice.kt", source, "kotlin")
    symbols = symbols_by_name(analysis)
    vat = symbols["com.acme.billing.Invoice.vat"]
    assert (vat.kind, vat.parent_qualified_name, vat.docstring) == (
        "method",
        "com.acme.billing.Invoice",
        "VAT of an invoice.",
    )
    assert symbols["com.acme.billing.Style.plus"].kind == "method"  # a nullable receiver
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("invoice.vat", "com.acme.billing.Invoice.vat") in calls
