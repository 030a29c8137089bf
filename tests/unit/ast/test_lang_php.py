"""PHP through the real extractor and the SQLite ast store: namespaced names, PHPDoc, use
imports (plain, aliased, grouped), calls across files and inheritance (extends, implements,
traits), on the fixture project under fixtures/php."""

from pathlib import Path

import pytest
from language_fixtures import analyse_tree, fixture_version, store_tree

from locus.ast.adapters.store import AstStore, FileIndex
from locus.ast.domain import FileAnalysis, extract
from locus.ast.domain.model import Relation, Symbol

pytestmark = pytest.mark.unit

FIXTURE = Path(__file__).parent / "fixtures" / "php"
INVOICE = "src/Billing/Invoice.php"
CONTROLLER = "src/Http/InvoiceController.php"
HELPERS = "src/Http/helpers.php"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(FIXTURE, "php")


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


def test_symbols_are_named_by_namespace_and_class(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    assert invoice.module_name == INVOICE
    assert invoice.parse_errors == 0
    kinds = {(s.qualified_name, s.kind, s.start_line, s.end_line) for s in invoice.symbols}
    assert ("App\\Billing\\Invoice", "class", 16, 67) in kinds  # from its #[attribute]
    assert ("App\\Billing\\Invoice::__construct", "constructor", 24, 28) in kinds
    assert ("App\\Billing\\Invoice::total", "method", 48, 51) in kinds
    assert _symbol(invoice, "App\\Billing\\Invoice::total").scope_name == "Invoice::total"
    assert _symbol(invoice, "App\\Billing\\Invoice::total").parent_qualified_name == (
        "App\\Billing\\Invoice"
    )

    kinds_by_name = {
        s.qualified_name: s.kind for analysis in analyses.values() for s in analysis.symbols
    }
    assert kinds_by_name["App\\Billing\\Contracts\\Billable"] == "interface"
    assert kinds_by_name["App\\Billing\\Concerns\\LogsActivity"] == "trait"
    assert kinds_by_name["App\\Billing\\InvoiceStatus"] == "enum"
    assert kinds_by_name["App\\Billing\\InvoiceStatus::isFinal"] == "method"
    assert kinds_by_name["App\\Http\\format_cents"] == "function"
    # Abstract and interface methods have no body: signatures.
    assert kinds_by_name["App\\Billing\\Document::title"] == "signature"
    assert kinds_by_name["App\\Billing\\Contracts\\Billable::total"] == "signature"


def test_phpdoc_and_signature(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    cls = _symbol(invoice, "App\\Billing\\Invoice")
    assert (
        cls.docstring == "An invoice: numbered lines a customer owes.\n\nTotals are kept in cents."
    )
    assert cls.signature.endswith("final class Invoice extends Document implements Billable")
    total = _symbol(invoice, "App\\Billing\\Invoice::total")
    assert total.docstring == "The sum of all lines, in cents."
    assert total.signature == "public function total(): int"
    assert _symbol(invoice, "App\\Billing\\Invoice::sum").docstring is None
    helper = _symbol(analyses[HELPERS], "App\\Http\\format_cents")
    assert helper.docstring == "Formats cents for display."


def test_imports_bind_last_segment_alias_and_group(analyses: dict[str, FileAnalysis]) -> None:
    controller = analyses[CONTROLLER]
    imports = _relations(controller, "imports", CONTROLLER)
    assert imports == {
        "App\\Billing\\Invoice": "App\\Billing\\Invoice",
        "App\\Billing\\InvoiceStatus": "App\\Billing\\InvoiceStatus",
        "App\\Billing\\Support\\Money": "App\\Billing\\Support\\Money",
        "App\\Billing\\Contracts\\Billable": "App\\Billing\\Contracts\\Billable",
        "/helpers.php": HELPERS,
    }


def test_calls_resolve_through_imports_this_and_namespace(
    analyses: dict[str, FileAnalysis],
) -> None:
    show = _relations(analyses[CONTROLLER], "calls", "App\\Http\\InvoiceController::show")
    assert show["Invoice::draft"] == "App\\Billing\\Invoice::draft"
    assert show["format_cents"] == "App\\Http\\format_cents"  # same namespace
    assert show["$this->describe"] == "App\\Http\\InvoiceController::describe"
    assert show["$invoice->add"] is None  # a variable's type is unknown
    store = _relations(analyses[CONTROLLER], "calls", "App\\Http\\InvoiceController::store")
    assert store["new Invoice"] == "App\\Billing\\Invoice"
    assert store["Cash::of"] == "App\\Billing\\Support\\Money::of"  # aliased group import
    describe = _relations(analyses[CONTROLLER], "calls", "App\\Http\\InvoiceController::describe")
    assert describe["\\App\\Http\\format_cents"] == "App\\Http\\format_cents"

    invoice = analyses[INVOICE]
    total = _relations(invoice, "calls", "App\\Billing\\Invoice::total")
    assert total == {"$this->sum": "App\\Billing\\Invoice::sum"}
    constructor = _relations(invoice, "calls", "App\\Billing\\Invoice::__construct")
    assert constructor["parent::__construct"] is None


def test_inherits_extends_implements_and_traits(analyses: dict[str, FileAnalysis]) -> None:
    inherits = _relations(analyses[INVOICE], "inherits", "App\\Billing\\Invoice")
    assert inherits == {
        "Document": "App\\Billing\\Document",
        "Billable": "App\\Billing\\Contracts\\Billable",
        "LogsActivity": "App\\Billing\\Concerns\\LogsActivity",
    }


def test_contains_links_members_to_their_class(analyses: dict[str, FileAnalysis]) -> None:
    contains = [r for r in analyses[INVOICE].relations if r.kind == "contains"]
    assert Relation("contains", INVOICE, "Invoice", "App\\Billing\\Invoice", 16) in contains
    assert (
        Relation("contains", "App\\Billing\\Invoice", "total", "App\\Billing\\Invoice::total", 48)
        in contains
    )


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[INVOICE].chunks}
    total = chunks[("method", "App\\Billing\\Invoice::total")]
    assert (total.start_line, total.end_line) == (48, 51)
    assert total.text.splitlines()[0].strip() == "public function total(): int"
    outline = chunks[("class_header", "App\\Billing\\Invoice")]
    assert (outline.start_line, outline.end_line) == (16, 67)
    assert "    public function total(): int ..." in outline.text
    assert "return $this->sum();" not in outline.text
    module = chunks[("module", INVOICE)]
    assert (module.start_line, module.end_line) == (1, 15)


def test_a_file_without_namespace_has_global_names() -> None:
    source = b"<?php\nfunction boot(): void\n{\n    helper();\n}\nfunction helper() {}\n"
    analysis = extract("bootstrap.php", source, "php")
    assert [s.qualified_name for s in analysis.symbols] == ["bootstrap.php", "boot", "helper"]
    assert _relations(analysis, "calls", "boot") == {"helper": "helper"}


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
    indexes = await store_tree(sqlite_ast_store, analyses, "php")
    show = _resolved(indexes[CONTROLLER], "calls", "App\\Http\\InvoiceController::show")
    assert show["Invoice::draft"] == _node_id(indexes, INVOICE, "App\\Billing\\Invoice::draft")
    assert show["format_cents"] == _node_id(indexes, HELPERS, "App\\Http\\format_cents")
    inherits = _resolved(indexes[INVOICE], "inherits", "App\\Billing\\Invoice")
    assert inherits["Document"] == _node_id(
        indexes, "src/Billing/Document.php", "App\\Billing\\Document"
    )

    dependencies = {d.target_module: d.target_file_id for d in indexes[INVOICE].dependencies}
    assert dependencies["App\\Billing\\Contracts\\Billable"] == (
        fixture_version("src/Billing/Contracts/Billable.php", "php").file_id
    )
    controller_dependencies = {
        d.target_module: d.target_file_id for d in indexes[CONTROLLER].dependencies
    }
    assert controller_dependencies[HELPERS] == fixture_version(HELPERS, "php").file_id

    await sqlite_ast_store.retract_file(fixture_version(INVOICE, "php", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(CONTROLLER, "php").file_id)
    assert after is not None
    show_after = _resolved(after, "calls", "App\\Http\\InvoiceController::show")
    assert show_after["Invoice::draft"] == ""
    assert show_after["format_cents"] == show["format_cents"]
