"""C# through the generic extractor and the real SQLite store: an `Acme.Billing` namespace
split over files (a file-scoped interface and static class, a block namespace with a class
deriving from another, a nested record, a constructor and XML docs) and an `Acme.App`
program using it."""

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

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "csharp"
IPRICED = "src/Billing/IPriced.cs"
TAX = "src/Billing/TaxTable.cs"
INVOICE = "src/Billing/Invoice.cs"
PROGRAM = "src/App/Program.cs"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "csharp")


def test_module_names_are_paths() -> None:
    assert module_name_for_path(INVOICE, "csharp") == INVOICE


def test_block_namespaces_are_containers(analyses: dict[str, FileAnalysis]) -> None:
    analysis = analyses[INVOICE]
    assert analysis.parse_errors == 0
    symbols = symbols_by_name(analysis)
    expected = {
        "Acme.Billing": ("namespace", 4, 55),
        "Acme.Billing.Invoice": ("class", 9, 44),
        "Acme.Billing.Invoice.Invoice": ("constructor", 14, 17),
        "Acme.Billing.Invoice.Add": ("method", 21, 25),
        "Acme.Billing.Invoice.Total": ("method", 27, 31),
        "Acme.Billing.Invoice.Net": ("method", 33, 41),
        "Acme.Billing.Entity": ("class", 46, 54),
        "Acme.Billing.Entity.Touch": ("method", 50, 53),
    }
    assert {n: (s.kind, s.start_line, s.end_line) for n, s in symbols.items()} == {
        INVOICE: ("module", 1, 55),
        **expected,
    }
    invoice = symbols["Acme.Billing.Invoice"]
    assert invoice.docstring == "An invoice: lines and the country they are taxed in."
    assert invoice.parent_qualified_name == "Acme.Billing"
    total = symbols["Acme.Billing.Invoice.Total"]
    assert (total.signature, total.scope_name) == (
        "public decimal Total()",
        "Acme.Billing.Invoice.Total",
    )


def test_file_scoped_namespace_prefixes_the_file(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[TAX])
    rate = symbols["Acme.Billing.TaxTable.RateFor"]
    assert (rate.kind, rate.start_line, rate.end_line, rate.scope_name) == (
        "method",
        13,
        13,
        "TaxTable.RateFor",
    )
    assert (
        rate.docstring
        == "The VAT rate of a System.String country code.\ncountry: ISO country code."
    )
    priced = symbols_by_name(analyses[IPRICED])
    # An interface method without a body is a signature; a default implementation a method.
    assert {name: s.kind for name, s in priced.items()} == {
        IPRICED: "module",
        "Acme.Billing.IPriced": "interface",
        "Acme.Billing.IPriced.Total": "signature",
        "Acme.Billing.IPriced.Describe": "method",
    }
    assert "Acme.Billing.IPriced.Total" not in {
        chunk.symbol_qualified_name for chunk in analyses[IPRICED].chunks
    }


def test_relations(analyses: dict[str, FileAnalysis]) -> None:
    invoice = analyses[INVOICE]
    assert relation_triples(invoice, "inherits") == {
        ("Acme.Billing.Invoice", "Entity", "Acme.Billing.Entity"),
        ("Acme.Billing.Invoice", "IPriced", "Acme.Billing.IPriced"),
    }
    calls = relation_triples(invoice, "calls")
    assert ("Acme.Billing.Invoice.Total", "Net", "Acme.Billing.Invoice.Net") in calls
    assert (
        "Acme.Billing.Invoice.Total",
        "TaxTable.RateFor",
        "Acme.Billing.TaxTable.RateFor",
    ) in calls
    # A field's member is its type's (`List<Line> _lines`): List is the framework's, so the
    # namespace's guess names no symbol and the store keeps the call unresolved.
    assert ("Acme.Billing.Invoice.Add", "_lines.Add", "Acme.Billing.List.Add") in calls
    program = analyses[PROGRAM]
    assert relation_triples(program, "imports") == {
        (PROGRAM, "Acme.Billing.*", "Acme.Billing"),
        (PROGRAM, "Acme.App.Output.ConsolePrinter", "Acme.App.Output.ConsolePrinter"),
    }
    assert (
        "Acme.App.Program.Main",
        "Printer.Print",
        "Acme.App.Output.ConsolePrinter.Print",
    ) in relation_triples(program, "calls")


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[INVOICE].chunks}
    total = chunks[("method", "Acme.Billing.Invoice.Total")]
    source = (ROOT / INVOICE).read_text().splitlines()
    assert (total.start_line, total.end_line) == (27, 31)
    assert total.text == "\n".join(source[26:31])
    outline = chunks[("class_header", "Acme.Billing.Invoice")]
    assert outline.text.startswith("    [Serializable]\n    public class Invoice : Entity, IPriced")
    assert "        public decimal Total() ..." in outline.text
    assert "public string Country { get; }" in outline.text


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
    indexes = await store_tree(sqlite_ast_store, analyses, "csharp")
    invoice, tax = indexes[INVOICE], indexes[TAX]
    rate = _node_id(tax, "Acme.Billing.TaxTable.RateFor")
    assert _resolved(invoice, "calls")["Acme.Billing.TaxTable.RateFor"] == rate
    assert _resolved(invoice, "inherits")["Acme.Billing.IPriced"] == _node_id(
        indexes[IPRICED], "Acme.Billing.IPriced"
    )
    assert _resolved(indexes[PROGRAM], "imports")["Acme.Billing"] == _node_id(
        invoice, "Acme.Billing"
    )

    assert await sqlite_ast_store.retract_file(fixture_version(TAX, "csharp", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(INVOICE, "csharp").file_id)
    assert after is not None
    assert _resolved(after, "calls")["Acme.Billing.TaxTable.RateFor"] == ""


def test_a_call_on_a_typed_variable_is_a_method_of_its_type() -> None:
    source = b"""namespace Acme.Billing;

public class Checkout
{
    private Ledger ledger;

    public void Pay(Invoice invoice, int cents)
    {
        var card = new CardPayment();
        List<Line> lines = invoice.Lines();
        ledger.Record(invoice);
        card.Charge(cents);
    }
}
"""
    analysis = extract("src/Billing/Checkout.cs", source, "csharp")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("invoice.Lines", "Acme.Billing.Invoice.Lines") in calls  # a parameter
    assert ("ledger.Record", "Acme.Billing.Ledger.Record") in calls  # a field
    assert ("card.Charge", "Acme.Billing.CardPayment.Charge") in calls  # var = new


async def test_the_store_resolves_names_through_using_and_enclosing_namespaces(
    sqlite_ast_store: AstStore, analyses: dict[str, FileAnalysis]
) -> None:
    # Program.cs (namespace Acme.App, `using Acme.Billing;`) writes `new Invoice("DE")`: the
    # file alone guesses Acme.App.Invoice; C# finds Acme.Billing.Invoice through the using.
    indexes = await store_tree(sqlite_ast_store, analyses, "csharp")
    program = indexes[PROGRAM]
    calls = {
        r.relation.target_name: r.target_node_id
        for r in program.relations
        if r.relation.kind == "calls"
    }
    assert calls["Invoice"] == _node_id(indexes[INVOICE], "Acme.Billing.Invoice")
    assert calls["Console.WriteLine"] == ""  # the framework's: no symbol of the project


async def test_a_global_using_serves_every_file_of_the_project(
    sqlite_ast_store: AstStore,
) -> None:
    usings = extract(
        "src/GlobalUsings.cs",
        b"global using Acme.Billing;\nglobal using static Acme.Tax.Rates;\nusing Local;\n",
        "csharp",
    )
    assert relation_triples(usings, "imports") == {
        ("src/GlobalUsings.cs", "global::Acme.Billing.*", "Acme.Billing"),
        ("src/GlobalUsings.cs", "global::Acme.Tax.Rates.*", "Acme.Tax.Rates"),
        ("src/GlobalUsings.cs", "Local.*", "Local"),
    }
    invoice = extract(
        "src/Billing/Invoice.cs",
        b"namespace Acme.Billing;\n\npublic class Invoice { }\n",
        "csharp",
    )
    program = extract(
        "src/App/Program.cs",
        b"namespace Acme.App;\n\npublic static class Program\n{\n"
        b"    public static void Main() { var invoice = new Invoice(); }\n}\n",
        "csharp",
    )
    indexes = await store_tree(
        sqlite_ast_store,
        {"src/GlobalUsings.cs": usings, "src/Billing/Invoice.cs": invoice, PROGRAM: program},
        "csharp",
    )
    calls = {
        r.relation.target_name: r.target_node_id
        for r in indexes[PROGRAM].relations
        if r.relation.kind == "calls"
    }
    assert calls["Invoice"] == _node_id(indexes["src/Billing/Invoice.cs"], "Acme.Billing.Invoice")


def test_conditional_directives_inside_a_declaration_do_not_break_it() -> None:
    # An interface whose members have default bodies only where a feature is defined (as
    # Serilog's ILogger): read as written, tree-sitter lost the interface and made a
    # constructor named `if` of the wreckage.
    source = b"""namespace Acme.Logging;

public interface ILogger
{
#if FEATURE_DEFAULT_INTERFACE
    private static readonly object[] None = new object[0];
#endif
    /// <summary>Writes an event.</summary>
    void Write(string message)
#if FEATURE_DEFAULT_INTERFACE
    {
        if (message == null)
            return;
        Emit(message);
    }
#elif LEGACY
        => Legacy(message);
#else
        ;
#endif

    bool IsEnabled(int level);
}
"""
    analysis = extract("src/Logging/ILogger.cs", source, "csharp")
    symbols = {s.qualified_name: (s.kind, s.start_line, s.end_line) for s in analysis.symbols}
    assert analysis.parse_errors == 0
    assert symbols == {  # `IsEnabled`, a member without a body, is a signature
        "src/Logging/ILogger.cs": ("module", 1, 23),
        "Acme.Logging.ILogger": ("interface", 3, 23),
        "Acme.Logging.ILogger.Write": ("method", 9, 15),
        "Acme.Logging.ILogger.IsEnabled": ("signature", 22, 22),
    }
    write = next(s for s in analysis.symbols if s.name == "Write")
    assert write.docstring == "Writes an event."
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("Emit", "Acme.Logging.Emit") in calls  # the kept (first) branch's body
    assert not any(written == "Legacy" for written, _ in calls)


def test_new_calls_the_class_it_creates() -> None:
    source = b"""namespace Acme.Billing;

public class Checkout
{
    public void Pay()
    {
        var ledger = new Ledger();
        var lines = new Lines<Invoice>(4);
        Ledger other = new();
    }
}
"""
    analysis = extract("src/Billing/Checkout.cs", source, "csharp")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("Ledger", "Acme.Billing.Ledger") in calls
    assert ("Lines", "Acme.Billing.Lines") in calls
    assert len(calls) == 2  # a target-typed `new()` names no class


def test_loop_and_catch_variables_are_typed_too() -> None:
    source = b"""namespace Acme.Billing;

public class Batch
{
    public void Run(List<Invoice> invoices)
    {
        foreach (Invoice invoice in invoices)
        {
            invoice.Close();
        }
        try { } catch (LedgerError error) { error.Report(); }
    }
}
"""
    analysis = extract("src/Billing/Batch.cs", source, "csharp")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("invoice.Close", "Acme.Billing.Invoice.Close") in calls
    assert ("error.Report", "Acme.Billing.LedgerError.Report") in calls


def test_a_partial_methods_implementation_is_the_symbol_not_its_declaration() -> None:
    source = b"""namespace Acme;

public partial class Invoice
{
    partial void OnTotalChanged();

    partial void OnTotalChanged()
    {
        Audit();
    }

    public abstract void Audit();
}
"""
    analysis = extract("src/Invoice.cs", source, "csharp")
    kinds = {s.qualified_name: (s.kind, s.start_line, s.end_line) for s in analysis.symbols}
    assert kinds["Acme.Invoice.OnTotalChanged"] == ("method", 7, 10)
    assert kinds["Acme.Invoice.Audit"] == ("signature", 12, 12)
    assert len([s for s in analysis.symbols if s.name == "OnTotalChanged"]) == 1
