"""Go through the generic extractor and the real SQLite store: the `github.com/acme/shop`
fixture module (a package split over two files with an interface, an embedding struct,
methods by receiver and a grouped type declaration; a package embedding another package's
interface; a command calling both)."""

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
from locus.ast.domain import FileAnalysis, extract, module_name_for_path
from locus.ast.domain.language_spec import SourceRoot

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "go"
SOURCE_ROOT = SourceRoot("", "github.com/acme/shop")
BILLING = "github.com/acme/shop/billing"
STORAGE = "github.com/acme/shop/internal/storage"
MAIN = "github.com/acme/shop/cmd/shop"
INVOICE = "billing/invoice.go"
TAX = "billing/tax.go"
STORAGE_GO = "internal/storage/storage.go"
MAIN_GO = "cmd/shop/main.go"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "go", source_root=SOURCE_ROOT, suffixes=(".go",))


def test_module_names_are_import_paths() -> None:
    assert module_name_for_path(INVOICE, "go", SOURCE_ROOT) == BILLING
    assert module_name_for_path("main.go", "go", SOURCE_ROOT) == "github.com/acme/shop"
    nested = SourceRoot("services/pay", "example.com/pay")
    assert module_name_for_path("services/pay/api/h.go", "go", nested) == "example.com/pay/api"
    # Without a module path the package is named by its directory.
    assert module_name_for_path("internal/billing/a.go", "go") == "internal/billing"
    assert module_name_for_path("main.go", "go") == "main"


def test_types_functions_and_methods_are_qualified_by_import_path(
    analyses: dict[str, FileAnalysis],
) -> None:
    analysis = analyses[INVOICE]
    assert analysis.parse_errors == 0
    assert analysis.module_name == BILLING
    symbols = symbols_by_name(analysis)
    expected = {
        BILLING: ("module", "", 1, 64),
        f"{BILLING}.Pricer": ("interface", "Pricer", 10, 12),
        # An interface's method: a signature (calls on a Pricer variable resolve to it).
        f"{BILLING}.Pricer.Price": ("signature", "Pricer.Price", 11, 11),
        f"{BILLING}.Document": ("struct", "Document", 15, 18),
        f"{BILLING}.Invoice": ("struct", "Invoice", 23, 27),
        f"{BILLING}.LineItem": ("struct", "LineItem", 31, 34),
        f"{BILLING}.Status": ("class", "Status", 36, 36),
        # A package-level variable: a constant, with its doc comment.
        f"{BILLING}.ErrEmpty": ("constant", "ErrEmpty", 40, 40),
        f"{BILLING}.NewInvoice": ("function", "NewInvoice", 43, 45),
        f"{BILLING}.Invoice.Add": ("method", "Invoice.Add", 48, 50),
        f"{BILLING}.Invoice.Total": ("method", "Invoice.Total", 53, 58),
        f"{BILLING}.Invoice.Price": ("method", "Invoice.Price", 61, 64),
    }
    assert {
        name: (s.kind, s.scope_name, s.start_line, s.end_line) for name, s in symbols.items()
    } == expected
    # A method belongs to its receiver's type, which the same package defines.
    assert symbols[f"{BILLING}.Invoice.Total"].parent_qualified_name == f"{BILLING}.Invoice"
    # Another file of the package shares the module name and adds methods to its types.
    tax = symbols_by_name(analyses[TAX])
    assert analyses[TAX].module_name == BILLING
    assert tax[f"{BILLING}.Invoice.subtotal"].kind == "method"


def test_signatures_and_godoc(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[INVOICE])
    invoice = symbols[f"{BILLING}.Invoice"]
    assert invoice.signature == "type Invoice struct"
    assert invoice.docstring == (
        "Invoice is a bill for one customer's order.\n\nLines are priced in cents; Total adds"
        " the VAT."
    )
    total = symbols[f"{BILLING}.Invoice.Total"]
    assert total.signature == "func (inv *Invoice) Total() (int, error)"
    assert total.docstring == "Total is the amount due in cents, VAT included."
    assert (
        symbols[f"{BILLING}.LineItem"].docstring == "LineItem is one priced product on an invoice."
    )
    # The package comment documents the module; a file without one has none.
    assert symbols[BILLING].docstring == "Package billing prices orders and issues invoices."
    assert symbols_by_name(analyses[TAX])[BILLING].docstring is None
    assert symbols_by_name(analyses[TAX])[f"{BILLING}.withVAT"].docstring is None


def test_contains_imports_and_embedding(analyses: dict[str, FileAnalysis]) -> None:
    contains = relation_triples(analyses[INVOICE], "contains")
    assert (BILLING, "Invoice", f"{BILLING}.Invoice") in contains
    assert (f"{BILLING}.Invoice", "Total", f"{BILLING}.Invoice.Total") in contains
    assert (f"{BILLING}.Invoice", "subtotal", f"{BILLING}.Invoice.subtotal") in relation_triples(
        analyses[TAX], "contains"
    )
    imports = relation_triples(analyses[MAIN_GO], "imports")
    assert (MAIN, BILLING, BILLING) in imports
    assert (MAIN, STORAGE, STORAGE) in imports
    assert (MAIN, "fmt", "fmt") in imports
    # Struct embedding and interface embedding (of another package's interface).
    assert relation_triples(analyses[INVOICE], "inherits") == {
        (f"{BILLING}.Invoice", "Document", f"{BILLING}.Document")
    }
    assert relation_triples(analyses[STORAGE_GO], "inherits") == {
        (f"{STORAGE}.Repository", "billing.Pricer", f"{BILLING}.Pricer")
    }


def test_calls_resolve_through_imports_aliases_receivers_and_the_package(
    analyses: dict[str, FileAnalysis],
) -> None:
    main = relation_triples(analyses[MAIN_GO], "calls")
    assert (f"{MAIN}.main", "billing.NewInvoice", f"{BILLING}.NewInvoice") in main
    assert (f"{MAIN}.main", "report", f"{MAIN}.report") in main
    assert (f"{MAIN}.report", "fmt.Printf", "fmt.Printf") in main
    invoice = relation_triples(analyses[INVOICE], "calls")
    # `inv.subtotal()` inside a method of Invoice: a method another file of the package defines.
    assert (f"{BILLING}.Invoice.Total", "inv.subtotal", f"{BILLING}.Invoice.subtotal") in invoice
    assert (f"{BILLING}.Invoice.Price", "inv.Total", f"{BILLING}.Invoice.Total") in invoice
    # A bare name is looked up in the package (tax.go defines withVAT); builtins name nothing.
    assert (f"{BILLING}.Invoice.Total", "withVAT", f"{BILLING}.withVAT") in invoice
    assert (f"{BILLING}.Invoice.Total", "len", None) in invoice
    assert (f"{BILLING}.withVAT", "roundCents", f"{BILLING}.roundCents") in relation_triples(
        analyses[TAX], "calls"
    )


def test_aliased_dot_and_blank_imports() -> None:
    source = b"""package app

import (
\tst "github.com/acme/shop/internal/storage"
\t. "strings"
\t_ "embed"
\tyaml "gopkg.in/yaml.v3"
\t"github.com/acme/shop/v2/money"
)

func run() {
\tst.Open()
\tmoney.Round()
\tyaml.Marshal()
\tToUpper()
}
"""
    analysis = extract("app/app.go", source, "go", root=SOURCE_ROOT)
    calls = relation_triples(analysis, "calls")
    app = "github.com/acme/shop/app"
    assert (f"{app}.run", "st.Open", f"{STORAGE}.Open") in calls
    assert (f"{app}.run", "money.Round", "github.com/acme/shop/v2/money.Round") in calls
    assert (f"{app}.run", "yaml.Marshal", "gopkg.in/yaml.v3.Marshal") in calls
    imports = relation_triples(analysis, "imports")
    assert (app, "strings.*", "strings") in imports
    assert (app, "embed", "embed") in imports
    assert [d.target_module for d in analysis.dependencies] == [
        STORAGE,
        "strings",
        "embed",
        "gopkg.in/yaml.v3",
        "github.com/acme/shop/v2/money",
    ]


def test_an_external_test_package_is_a_package_of_its_own() -> None:
    internal = b"package billing\n\nfunc TestTotal(t *testing.T) { total() }\n"
    external = b"""package billing_test

import "github.com/acme/shop/billing"

func TestTotal(t *testing.T) { billing.Total(); helper() }

func helper() {}
"""
    inside = extract("billing/total_test.go", internal, "go", root=SOURCE_ROOT)
    outside = extract("billing/api_test.go", external, "go", root=SOURCE_ROOT)
    package = "github.com/acme/shop/billing"
    assert f"{package}.TestTotal" in {s.qualified_name for s in inside.symbols}
    assert {s.qualified_name for s in outside.symbols if s.kind == "function"} == {
        f"{package}_test.TestTotal",
        f"{package}_test.helper",
    }
    calls = relation_triples(outside, "calls")
    assert (f"{package}_test.TestTotal", "billing.Total", f"{package}.Total") in calls
    assert (f"{package}_test.TestTotal", "helper", f"{package}_test.helper") in calls


def test_a_call_on_a_typed_variable_is_a_method_of_its_type() -> None:
    source = b"""package app

import "google.golang.org/grpc"

func Dial(cc *grpc.ClientConn, inv Invoice, items []Invoice) {
	cc.Invoke()
	inv.Total()
	items.Total()
	var s Server
	s.Serve()
	local := &Server{}
	local.Stop()
	func() { inv.Price() }()
}
"""
    analysis = extract("app/app.go", source, "go", root=SOURCE_ROOT)
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    app = "github.com/acme/shop/app"
    assert ("cc.Invoke", "google.golang.org/grpc.ClientConn.Invoke") in calls
    assert ("inv.Total", f"{app}.Invoice.Total") in calls
    assert ("s.Serve", f"{app}.Server.Serve") in calls
    assert ("local.Stop", f"{app}.Server.Stop") in calls
    assert ("inv.Price", f"{app}.Invoice.Price") in calls  # in a closure too
    # A slice has no methods of its element type: left as the package's guess.
    assert ("items.Total", f"{app}.items.Total") in calls


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[INVOICE].chunks}
    total = chunks[("method", f"{BILLING}.Invoice.Total")]
    assert (total.start_line, total.end_line) == (53, 58)
    source = (ROOT / INVOICE).read_text().splitlines()
    assert total.text == "\n".join(source[52:58])
    outline = chunks[("class_header", f"{BILLING}.Invoice")]
    assert outline.text.startswith("type Invoice struct {\n\tDocument\n")
    assert (outline.start_line, outline.end_line) == (23, 27)
    function = chunks[("function", f"{BILLING}.NewInvoice")]
    assert (function.start_line, function.end_line) == (43, 45)
    module = next(c for c in analyses[INVOICE].chunks if c.kind == "module")
    assert (module.start_line, module.end_line) == (1, 9)
    assert "package billing" in module.text


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
    indexes = await store_tree(sqlite_ast_store, analyses, "go")
    main, invoice, tax = indexes[MAIN_GO], indexes[INVOICE], indexes[TAX]
    calls = _resolved(main, "calls")
    assert calls[f"{BILLING}.NewInvoice"] == _node_id(invoice, f"{BILLING}.NewInvoice")
    invoice_calls = _resolved(invoice, "calls")
    assert invoice_calls[f"{BILLING}.Invoice.subtotal"] == _node_id(
        tax, f"{BILLING}.Invoice.subtotal"
    )
    assert invoice_calls[f"{BILLING}.withVAT"] == _node_id(tax, f"{BILLING}.withVAT")
    assert _resolved(indexes[STORAGE_GO], "inherits")[f"{BILLING}.Pricer"] == _node_id(
        invoice, f"{BILLING}.Pricer"
    )
    # Importing a package depends on every file of it.
    dependencies = {(d.target_module, d.target_file_id) for d in main.dependencies}
    assert (BILLING, fixture_version(INVOICE, "go").file_id) in dependencies
    assert (BILLING, fixture_version(TAX, "go").file_id) in dependencies
    assert (STORAGE, fixture_version(STORAGE_GO, "go").file_id) in dependencies
    assert ("fmt", "") in dependencies

    assert await sqlite_ast_store.retract_file(fixture_version(INVOICE, "go", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(MAIN_GO, "go").file_id)
    assert after is not None
    assert _resolved(after, "calls")[f"{BILLING}.NewInvoice"] == ""
    targets = {(d.target_module, d.target_file_id) for d in after.dependencies}
    assert (BILLING, fixture_version(INVOICE, "go").file_id) not in targets
    assert (BILLING, fixture_version(TAX, "go").file_id) in targets
