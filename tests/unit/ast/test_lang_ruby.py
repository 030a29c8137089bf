"""Ruby through the real extractor and the SQLite ast store: `module`/`class` nesting as
`::`-joined names, `#` doc comments, require/require_relative, calls across files, superclasses
and mixins, on the fixture project under fixtures/ruby."""

from pathlib import Path

import pytest
from language_fixtures import analyse_tree, fixture_version, store_tree

from locus.ast.adapters.store import AstStore, FileIndex
from locus.ast.domain import FileAnalysis, extract
from locus.ast.domain.model import Relation, Symbol

pytestmark = pytest.mark.unit

FIXTURE = Path(__file__).parent / "fixtures" / "ruby"
INVOICE = "lib/billing/invoice.rb"
TAX = "lib/billing/tax.rb"
CHECKOUT = "app/checkout.rb"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(FIXTURE, "ruby")


def _symbol(analysis: FileAnalysis, qualified_name: str) -> Symbol:
    matches = [s for s in analysis.symbols if s.qualified_name == qualified_name]
    assert matches, f"{qualified_name} not in {[s.qualified_name for s in analysis.symbols]}"
    return matches[0]


def _relations(analysis: FileAnalysis, kind: str, source: str) -> dict[str, str | None]:
    return {
        r.target_name: r.target_qualified_name
        for r in analysis.relations
        if r.kind == kind and r.source_qualified_name == source
    }


def test_symbols_follow_module_and_class_nesting(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    assert invoice.module_name == "lib/billing/invoice"
    assert invoice.parse_errors == 0
    found = {(s.qualified_name, s.kind, s.start_line, s.end_line) for s in invoice.symbols}
    assert ("Billing", "namespace", 7, 52) in found
    assert ("Billing::Invoice", "class", 11, 51) in found
    assert ("Billing::Invoice::initialize", "constructor", 16, 19) in found
    assert ("Billing::Invoice::draft", "method", 21, 23) in found  # def self.draft
    assert ("Billing::Invoice::total", "method", 31, 34) in found
    assert ("Billing::Invoice::Line", "class", 41, 48) in found
    assert ("Billing::Invoice::Line::initialize", "constructor", 44, 47) in found
    assert ("Billing::Invoice::Error", "class", 50, 50) in found  # `class Error < X; end`
    total = _symbol(invoice, "Billing::Invoice::total")
    assert total.scope_name == "Billing::Invoice::total"
    assert total.parent_qualified_name == "Billing::Invoice"

    checkout = analyses[CHECKOUT]
    assert _symbol(checkout, "checkout").kind == "function"  # a top-level def
    assert _symbol(checkout, "Checkout::receipt").kind == "method"
    payable = analyses["lib/billing/payable.rb"]
    assert _symbol(payable, "Billing::Payable").kind == "namespace"
    assert _symbol(payable, "Billing::Payable::paid?").kind == "method"


def test_a_class_named_by_its_path_is_scoped_by_it() -> None:
    source = b"class Billing::Tax::Rate < Struct\n  def value\n    1\n  end\nend\n"
    analysis = extract("lib/billing/tax/rate.rb", source, "ruby")
    rate = _symbol(analysis, "Billing::Tax::Rate")
    assert rate.name == "Rate"
    assert rate.parent_qualified_name == "Billing::Tax"
    assert _symbol(analysis, "Billing::Tax::Rate::value").kind == "method"


def test_doc_comments_and_signatures(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    # The class's comment sits before the module's body in the tree: still its doc.
    cls = _symbol(invoice, "Billing::Invoice")
    assert cls.docstring == "An invoice: numbered lines a customer owes.\n\nAmounts are in cents."
    assert cls.signature == "class Invoice < Document"
    assert _symbol(invoice, "Billing::Invoice::total").docstring == "Net amount plus tax, in cents."
    assert _symbol(invoice, "Billing::Invoice::Line").docstring == "One billed item."
    assert _symbol(invoice, "Billing::Invoice::subtotal").docstring is None
    rate = _symbol(analyses[TAX], "Billing::Tax::rate")
    assert rate.signature == "def self.rate(amount, kind = :standard)"
    assert rate.docstring == "The tax on +amount+ cents at the given rate."
    # The magic comment is separated by a blank line: nobody's doc.
    assert _symbol(analyses[TAX], "Billing").docstring is None


def test_requires_resolve_to_module_names(analyses: dict[str, FileAnalysis]) -> None:
    assert _relations(analyses[INVOICE], "imports", "lib/billing/invoice") == {
        "'document'": "lib/billing/document",
        "'payable'": "lib/billing/payable",
        "'tax'": "lib/billing/tax",
    }
    assert _relations(analyses["lib/billing.rb"], "imports", "lib/billing") == {
        "'billing/invoice'": "lib/billing/invoice"
    }
    # `require` is relative to the load path: lib/ of the gem.
    assert _relations(analyses[CHECKOUT], "imports", "app/checkout") == {
        "billing/invoice": "lib/billing/invoice"
    }


def test_calls_resolve_lexically(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    assert _relations(invoice, "calls", "Billing::Invoice::total") == {
        "Tax.rate": "Billing::Tax::rate"  # a sibling constant of the enclosing module
    }
    assert _relations(invoice, "calls", "Billing::Invoice::add") == {
        "Line.new": "Billing::Invoice::Line"  # `.new` calls the class
    }
    assert _relations(invoice, "calls", "Billing::Invoice::initialize") == {"super": None}
    run = _relations(analyses[CHECKOUT], "calls", "Checkout::run")
    assert run["Billing::Invoice.draft"] == "Billing::Invoice::draft"
    assert run["receipt"] == "Checkout::receipt"  # implicit self
    assert run["invoice.add"] is None  # a local's class is unknown
    assert _relations(analyses[CHECKOUT], "calls", "checkout") == {"Checkout.new": "Checkout"}
    # Loading and mixing in are not calls.
    module_calls = _relations(invoice, "calls", "lib/billing/invoice")
    assert "require_relative" not in module_calls
    assert "include" not in module_calls


def test_inherits_superclass_and_mixins(analyses: dict[str, FileAnalysis]) -> None:
    assert _relations(analyses[INVOICE], "inherits", "Billing::Invoice") == {
        "Document": "Billing::Document",
        "Payable": "Billing::Payable",
    }


def test_contains_and_chunks(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    assert (
        Relation("contains", "Billing::Invoice", "Line", "Billing::Invoice::Line", 41)
        in invoice.relations
    )
    chunks = {(c.kind, c.symbol_qualified_name): c for c in invoice.chunks}
    total = chunks[("method", "Billing::Invoice::total")]
    assert (total.start_line, total.end_line) == (31, 34)
    assert total.text.splitlines()[-1].strip() == "end"
    outline = chunks[("class_header", "Billing::Invoice")]
    assert (outline.start_line, outline.end_line) == (11, 51)
    assert "    def total ..." in outline.text
    assert "Tax.rate(net)" not in outline.text
    assert "    include Payable" in outline.text
    assert ("class_header", "Billing::Invoice::Line") in chunks


def _resolved(index: FileIndex, kind: str, source: str) -> dict[str, str]:
    return {
        r.relation.target_name: r.target_node_id
        for r in index.relations
        if r.relation.kind == kind and r.relation.source_qualified_name == source
    }


def _node_id(indexes: dict[str, FileIndex], path: str, qualified_name: str) -> str:
    return next(s.node_id for s in indexes[path].symbols if s.qualified_name == qualified_name)


async def test_store_resolves_across_files_and_forgets_a_retracted_file(
    sqlite_ast_store: AstStore, analyses: dict[str, FileAnalysis]
) -> None:
    indexes = await store_tree(sqlite_ast_store, analyses, "ruby")
    total = _resolved(indexes[INVOICE], "calls", "Billing::Invoice::total")
    assert total["Tax.rate"] == _node_id(indexes, TAX, "Billing::Tax::rate")
    run = _resolved(indexes[CHECKOUT], "calls", "Checkout::run")
    assert run["Billing::Invoice.draft"] == _node_id(indexes, INVOICE, "Billing::Invoice::draft")
    inherits = _resolved(indexes[INVOICE], "inherits", "Billing::Invoice")
    assert inherits["Document"] == _node_id(indexes, "lib/billing/document.rb", "Billing::Document")

    dependencies = {d.target_module: d.target_file_id for d in indexes[CHECKOUT].dependencies}
    assert dependencies == {"lib/billing/invoice": fixture_version(INVOICE, "ruby").file_id}

    await sqlite_ast_store.retract_file(fixture_version(TAX, "ruby", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(INVOICE, "ruby").file_id)
    assert after is not None
    assert _resolved(after, "calls", "Billing::Invoice::total")["Tax.rate"] == ""
    tax_dependency = {d.target_module: d.target_file_id for d in after.dependencies}
    assert tax_dependency["lib/billing/tax"] == ""
