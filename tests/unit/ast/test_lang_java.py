"""Java through the generic extractor and the real SQLite store: the `com.acme` fixture (an
interface, an abstract base, implementations, a nested class and enum, static and type
imports, a caller in another package)."""

import pytest
from language_fixtures import (
    AST_FIXTURES,
    analyse_tree,
    fixture_version,
    relation_triples,
    store_tree,
    symbols_by_name,
)

from locus.ast.adapters.store import AstStore, FileIndex, SymbolQuery
from locus.ast.domain import FileAnalysis, extract, module_name_for_path
from locus.ast.domain.language_spec import SourceRoot

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "java"
SOURCE_ROOT = SourceRoot("src/main/java", "")
BASE = "src/main/java/com/acme"
INVOICE = f"{BASE}/billing/Invoice.java"
CHECKOUT = f"{BASE}/app/CheckoutService.java"
MONEY = f"{BASE}/util/Money.java"
CARD = f"{BASE}/billing/CardPayment.java"
DOCUMENT = f"{BASE}/billing/Document.java"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "java", source_root=SOURCE_ROOT)


def test_module_names_are_paths_below_the_source_root() -> None:
    assert module_name_for_path(INVOICE, "java", SOURCE_ROOT) == "com/acme/billing/Invoice.java"
    # Without a detected root the Maven layout is recognised; anything else stays as it is.
    assert module_name_for_path("svc/src/test/java/a/BTest.java", "java") == "a/BTest.java"
    assert module_name_for_path("tools/Gen.java", "java") == "tools/Gen.java"


def test_types_methods_and_constructors_are_qualified_by_package(
    analyses: dict[str, FileAnalysis],
) -> None:
    analysis = analyses[INVOICE]
    assert analysis.parse_errors == 0
    assert analysis.module_name == "com/acme/billing/Invoice.java"
    symbols = symbols_by_name(analysis)
    expected = {
        "com/acme/billing/Invoice.java": ("module", "", 1, 82),
        "com.acme.billing.Invoice": ("class", "Invoice", 13, 82),
        "com.acme.billing.Invoice.Invoice": ("constructor", "Invoice.Invoice", 17, 19),
        "com.acme.billing.Invoice.empty": ("method", "Invoice.empty", 22, 24),
        "com.acme.billing.Invoice.total": ("method", "Invoice.total", 31, 38),
        "com.acme.billing.Invoice.LineItem": ("class", "Invoice.LineItem", 54, 66),
        "com.acme.billing.Invoice.LineItem.LineItem": (
            "constructor",
            "Invoice.LineItem.LineItem",
            58,
            61,
        ),
        "com.acme.billing.Invoice.LineItem.cents": ("method", "Invoice.LineItem.cents", 63, 65),
        "com.acme.billing.Invoice.Status": ("enum", "Invoice.Status", 68, 81),
        "com.acme.billing.Invoice.Status.Status": ("constructor", "Invoice.Status.Status", 74, 76),
        "com.acme.billing.Invoice.Status.code": ("method", "Invoice.Status.code", 78, 80),
    }
    for qualified_name, (kind, scope_name, start, end) in expected.items():
        symbol = symbols[qualified_name]
        assert (symbol.kind, symbol.scope_name, symbol.start_line, symbol.end_line) == (
            kind,
            scope_name,
            start,
            end,
        ), qualified_name
    assert symbols["com/acme/billing/Invoice.java"].name == "Invoice.java"
    assert symbols["com.acme.billing.Invoice.LineItem.cents"].parent_qualified_name == (
        "com.acme.billing.Invoice.LineItem"
    )


def test_declarations_without_a_body_are_signatures_with_no_chunk(
    analyses: dict[str, FileAnalysis],
) -> None:
    analysis = analyses[f"{BASE}/billing/PaymentMethod.java"]
    interface = symbols_by_name(analysis)
    assert interface["com.acme.billing.PaymentMethod"].kind == "interface"
    assert interface["com.acme.billing.PaymentMethod.label"].kind == "method"  # a default body
    charge = interface["com.acme.billing.PaymentMethod.charge"]
    assert charge.kind == "signature"
    assert charge.parent_qualified_name == "com.acme.billing.PaymentMethod"
    assert (charge.start_line, charge.end_line) == (5, 5)
    assert charge.signature == "boolean charge(long cents)"
    # A signature is a line of its interface's outline, never a chunk of its own.
    owners = {chunk.symbol_qualified_name for chunk in analysis.chunks}
    assert "com.acme.billing.PaymentMethod.charge" not in owners
    assert "com.acme.billing.PaymentMethod.label" in owners
    document = symbols_by_name(analyses[DOCUMENT])
    assert document["com.acme.billing.Document.total"].kind == "signature"  # abstract


def test_javadoc_and_signatures(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[INVOICE])
    invoice = symbols["com.acme.billing.Invoice"]
    assert invoice.docstring == (
        "A customer invoice: numbered line items and their total.\n\n@see PaymentMethod"
    )
    assert invoice.signature == (
        '@SuppressWarnings("unused") public class Invoice extends Document '
        "implements Comparable<Invoice>"
    )
    empty = symbols["com.acme.billing.Invoice.empty"]
    assert (empty.signature, empty.docstring) == (
        "public static Invoice empty()",
        "An invoice without items.",
    )
    assert symbols["com.acme.billing.Invoice.total"].docstring is None
    assert symbols["com.acme.billing.Invoice.LineItem"].docstring == "One billed position."


def test_contains_imports_and_inherits(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    contains = relation_triples(invoice, "contains")
    assert ("com/acme/billing/Invoice.java", "Invoice", "com.acme.billing.Invoice") in contains
    assert (
        "com.acme.billing.Invoice.LineItem",
        "cents",
        "com.acme.billing.Invoice.LineItem.cents",
    ) in contains
    assert relation_triples(invoice, "imports") == {
        ("com/acme/billing/Invoice.java", "java.util.ArrayList", "java.util.ArrayList"),
        ("com/acme/billing/Invoice.java", "java.util.List", "java.util.List"),
        ("com/acme/billing/Invoice.java", "com.acme.util.Money", "com.acme.util.Money"),
    }
    # The base class lives in another file of the same package, without an import.
    assert (
        "com.acme.billing.Invoice",
        "Document",
        "com.acme.billing.Document",
    ) in relation_triples(invoice, "inherits")
    assert relation_triples(analyses[CARD], "inherits") == {
        ("com.acme.billing.CardPayment", "PaymentMethod", "com.acme.billing.PaymentMethod")
    }
    checkout = analyses[CHECKOUT]
    assert relation_triples(checkout, "imports") == {
        (
            "com/acme/app/CheckoutService.java",
            "com.acme.util.Money.round",
            "com.acme.util.Money.round",
        ),
        (
            "com/acme/app/CheckoutService.java",
            "com.acme.billing.CardPayment",
            "com.acme.billing.CardPayment",
        ),
        (
            "com/acme/app/CheckoutService.java",
            "com.acme.billing.Invoice",
            "com.acme.billing.Invoice",
        ),
        ("com/acme/app/CheckoutService.java", "com.acme.util.*", "com.acme.util"),
    }


def test_calls_resolve_members_imports_and_static_imports(
    analyses: dict[str, FileAnalysis],
) -> None:
    calls = relation_triples(analyses[INVOICE], "calls")
    # A bare call reaches the class's own method; `this.` too; `new` names the class.
    assert ("com.acme.billing.Invoice.settle", "total", "com.acme.billing.Invoice.total") in calls
    assert (
        "com.acme.billing.Invoice.describe",
        "this.total",
        "com.acme.billing.Invoice.total",
    ) in calls
    assert ("com.acme.billing.Invoice.empty", "Invoice", "com.acme.billing.Invoice") in calls
    assert (
        "com.acme.billing.Invoice.add",
        "LineItem",
        "com.acme.billing.Invoice.LineItem",
    ) in calls
    assert (
        "com.acme.billing.Invoice.describe",
        "Money.format",
        "com.acme.util.Money.format",
    ) in calls
    checkout = relation_triples(analyses[CHECKOUT], "calls")
    caller = "com.acme.app.CheckoutService.checkout"
    assert (caller, "Invoice.empty", "com.acme.billing.Invoice.empty") in checkout
    assert (caller, "CardPayment", "com.acme.billing.CardPayment") in checkout
    assert (caller, "round", "com.acme.util.Money.round") in checkout
    # A chained call has no name to resolve.
    assert (caller, "Invoice.empty().add", None) in checkout


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[INVOICE].chunks}
    total = chunks[("method", "com.acme.billing.Invoice.total")]
    assert (total.start_line, total.end_line) == (31, 38)
    source = (ROOT / INVOICE).read_text().splitlines()
    assert total.text == "\n".join(source[30:38])
    outline = chunks[("class_header", "com.acme.billing.Invoice")]
    assert outline.text.startswith('@SuppressWarnings("unused")\npublic class Invoice extends')
    assert "    public static Invoice empty() ..." in outline.text
    assert "sum += item.cents()" not in outline.text
    nested = chunks[("method", "com.acme.billing.Invoice.LineItem.cents")]
    assert (nested.start_line, nested.end_line) == (63, 65)
    module = chunks[("module", "com/acme/billing/Invoice.java")]
    assert (module.start_line, module.end_line) == (1, 12)


def test_file_without_package_has_global_names() -> None:
    analysis = extract("Main.java", b"class Main { void run() { } }\n", "java")
    assert {s.qualified_name for s in analysis.symbols} == {"Main.java", "Main", "Main.run"}


def _resolved(index: FileIndex, kind: str) -> dict[str, str]:
    return {
        r.relation.target_qualified_name: r.target_node_id
        for r in index.relations
        if r.relation.kind == kind and r.relation.target_qualified_name
    }


def _node_id(index: FileIndex, qualified_name: str) -> str:
    return next(s.node_id for s in index.symbols if s.qualified_name == qualified_name)


async def test_store_resolves_across_files_and_forgets_a_retracted_file(
    sqlite_ast_store: AstStore, analyses: dict[str, FileAnalysis]
) -> None:
    indexes = await store_tree(sqlite_ast_store, analyses, "java")
    checkout, invoice = indexes[CHECKOUT], indexes[INVOICE]
    calls = _resolved(checkout, "calls")
    assert calls["com.acme.billing.Invoice.empty"] == _node_id(
        invoice, "com.acme.billing.Invoice.empty"
    )
    assert calls["com.acme.util.Money.round"] == _node_id(
        indexes[MONEY], "com.acme.util.Money.round"
    )
    assert calls["com.acme.billing.CardPayment"] == _node_id(
        indexes[CARD], "com.acme.billing.CardPayment"
    )
    assert _resolved(invoice, "inherits")["com.acme.billing.Document"] == _node_id(
        indexes[DOCUMENT], "com.acme.billing.Document"
    )
    dependencies = {d.target_module: d.target_file_id for d in checkout.dependencies}
    assert dependencies["com.acme.billing.Invoice"] == fixture_version(INVOICE, "java").file_id
    assert dependencies["com.acme.billing.CardPayment"] == fixture_version(CARD, "java").file_id
    assert dependencies["com.acme.util.Money"] == fixture_version(MONEY, "java").file_id

    assert await sqlite_ast_store.retract_file(fixture_version(INVOICE, "java", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(CHECKOUT, "java").file_id)
    assert after is not None
    calls_after = _resolved(after, "calls")
    assert calls_after["com.acme.billing.Invoice.empty"] == ""
    assert calls_after["com.acme.util.Money.round"] != ""
    targets = {d.target_file_id for d in after.dependencies}
    assert fixture_version(INVOICE, "java").file_id not in targets
    assert fixture_version(CARD, "java").file_id in targets


OVERLOADS = b"""package com.acme.xml;

public class XmlMapper {
    public XmlMapper() { this(new Factory()); }

    public XmlMapper(Factory factory) { this.factory = factory; }

    public <T> T readValue(String content) {
        return readValue(content, Object.class);
    }

    public <T> T readValue(String content, Class<T> type) {
        Parser parser = factory.parser(content);
        return parser.read(type);
    }
}
"""


def test_each_overload_is_a_symbol_with_its_own_lines_and_calls() -> None:
    analysis = extract("src/main/java/com/acme/xml/XmlMapper.java", OVERLOADS, "java")
    spans = {
        s.qualified_name: (s.kind, s.scope_name, s.start_line, s.end_line)
        for s in analysis.symbols
        if s.kind in ("method", "constructor")
    }
    assert spans == {
        "com.acme.xml.XmlMapper.XmlMapper": ("constructor", "XmlMapper.XmlMapper", 4, 4),
        "com.acme.xml.XmlMapper.XmlMapper(Factory factory)": (
            "constructor",
            "XmlMapper.XmlMapper",
            6,
            6,
        ),
        "com.acme.xml.XmlMapper.readValue": ("method", "XmlMapper.readValue", 8, 10),
        "com.acme.xml.XmlMapper.readValue(String content, Class<T> type)": (
            "method",
            "XmlMapper.readValue",
            12,
            15,
        ),
    }
    calls = relation_triples(analysis, "calls")
    # The second overload's calls are its own; a call by name resolves to the first overload.
    callers = {(source, written) for source, written, _ in calls}
    assert ("com.acme.xml.XmlMapper.readValue(String content, Class<T> type)", "parser.read") in (
        callers
    )
    assert ("com.acme.xml.XmlMapper.readValue", "parser.read") not in callers
    assert (
        "com.acme.xml.XmlMapper.readValue",
        "readValue",
        "com.acme.xml.XmlMapper.readValue",
    ) in calls
    chunks = {c.symbol_qualified_name for c in analysis.chunks}
    assert "com.acme.xml.XmlMapper.readValue(String content, Class<T> type)" in chunks


def test_a_call_on_a_typed_variable_is_a_method_of_its_type() -> None:
    source = b"""package com.acme.xml;

import com.acme.io.Reader;

class Loader {
    private Cache cache;

    Object load(Reader reader, String key) {
        Parser parser = new Parser();
        var tokens = new Tokenizer(reader);
        cache.get(key);
        tokens.next();
        parser.parse(reader.read());
        return key.trim();
    }
}
"""
    analysis = extract("src/main/java/com/acme/xml/Loader.java", source, "java")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("cache.get", "com.acme.xml.Cache.get") in calls  # a field
    assert ("tokens.next", "com.acme.xml.Tokenizer.next") in calls  # var = new Tokenizer
    assert ("parser.parse", "com.acme.xml.Parser.parse") in calls  # a local
    assert ("reader.read", "com.acme.io.Reader.read") in calls  # a parameter, imported type
    # String is java.lang's: resolved as the package's guess, which names no symbol.
    assert ("key.trim", "com.acme.xml.String.trim") in calls


def test_loop_catch_and_resource_variables_are_typed_too() -> None:
    source = b"""package com.acme.xml;

class Batch {
    void run(java.util.List<Item> items) {
        for (Item item : items) {
            item.check();
        }
        try (Session session = open()) {
            session.flush();
        } catch (ParseError error) {
            error.report();
        }
    }
}
"""
    analysis = extract("src/main/java/com/acme/xml/Batch.java", source, "java")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("item.check", "com.acme.xml.Item.check") in calls
    assert ("session.flush", "com.acme.xml.Session.flush") in calls
    assert ("error.report", "com.acme.xml.ParseError.report") in calls


async def test_an_exact_symbol_search_may_take_the_end_of_a_qualified_name(
    sqlite_ast_store: AstStore, analyses: dict[str, FileAnalysis]
) -> None:
    await store_tree(sqlite_ast_store, analyses, "java")
    project = fixture_version(INVOICE, "java").project_id

    async def exact(
        text: str, name_end: bool = True, without_signatures: bool = False
    ) -> list[str]:
        query = SymbolQuery(
            project,
            text.lower(),
            "",
            "",
            exact=True,
            name_end=name_end,
            without_signatures=without_signatures,
        )
        return [s.qualified_name for s, _ in await sqlite_ast_store.find_symbols(query, 0, 10)]

    assert await exact("Invoice.total") == ["com.acme.billing.Invoice.total"]
    assert await exact("billing.Invoice.total") == ["com.acme.billing.Invoice.total"]
    assert await exact("com.acme.billing.Invoice.total") == ["com.acme.billing.Invoice.total"]
    assert await exact("voice.total") == []  # not after a separator: no exact match
    # Without name_end (Locate's lookups of the question's names: an index lookup) only the
    # name or the whole qualified name.
    assert await exact("Invoice.total", name_end=False) == []
    assert await exact("total", name_end=False) == [
        "com.acme.billing.Document.total",  # the abstract method Invoice implements
        "com.acme.billing.Invoice.total",
    ]
    # Locate's lookups leave signatures out, so a page holds only definitions.
    assert await exact("total", name_end=False, without_signatures=True) == [
        "com.acme.billing.Invoice.total"
    ]


def test_a_method_with_a_body_keeps_its_plain_name_beside_signatures_of_its_overloads() -> None:
    """An interface declaring `verify(T mock)` before a default overload: the default method
    (with a body, what a fix changes) keeps the plain name, as it did before signatures were
    symbols; the signature takes its parameter list. Calls through the interface resolve."""
    source = b"""package acme;

public interface Checker {
    <T> T verify(T mock);

    default void verify(Object mock, int times) {
        check(times);
    }

    void check(int times);
}

class Use {
    void run(Checker checker) {
        checker.check(1);
    }
}
"""
    analysis = extract("src/main/java/acme/Checker.java", source, "java")
    kinds = {s.qualified_name: (s.kind, s.start_line) for s in analysis.symbols}
    assert kinds["acme.Checker.verify"] == ("method", 6)
    assert kinds["acme.Checker.verify(T mock)"] == ("signature", 4)
    assert kinds["acme.Checker.check"] == ("signature", 10)
    # Document order is kept whatever order the definitions were named in.
    assert [s.start_line for s in analysis.symbols] == sorted(
        s.start_line for s in analysis.symbols
    )
    calls = {(r.source_qualified_name, r.target_qualified_name) for r in analysis.relations}
    assert ("acme.Checker.verify", "acme.Checker.check") in calls
    assert ("acme.Use.run", "acme.Checker.check") in calls
