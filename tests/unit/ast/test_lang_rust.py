"""Rust through the generic extractor and the real SQLite store: the `shop-core` fixture crate
(traits with a supertrait and a default method, a struct with several impl blocks, trait
impls, a tuple struct, an inline test module, `mod` declarations, grouped and `self::` uses,
a caller in another module)."""

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
from locus.ast.domain.specs.rust import resolve_rust_import, unwrap_item_macros

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "rust"
SOURCE_ROOT = SourceRoot("", "shop-core")
CRATE = "shop_core"
BILLING = "shop_core::billing"
TAX = "shop_core::billing::tax"
STORAGE = "shop_core::storage"
LIB_RS = "src/lib.rs"
BILLING_RS = "src/billing/mod.rs"
TAX_RS = "src/billing/tax.rs"
STORAGE_RS = "src/storage.rs"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "rust", source_root=SOURCE_ROOT, suffixes=(".rs",))


@pytest.mark.parametrize(
    ("path", "root", "module_name"),
    [
        ("src/lib.rs", SOURCE_ROOT, "shop_core"),
        ("src/main.rs", SOURCE_ROOT, "shop_core"),
        ("src/billing/mod.rs", SOURCE_ROOT, "shop_core::billing"),
        ("src/billing.rs", SOURCE_ROOT, "shop_core::billing"),
        ("src/billing/tax.rs", SOURCE_ROOT, "shop_core::billing::tax"),
        ("crates/api/src/lib.rs", SourceRoot("crates/api", "api"), "api"),
        ("crates/api/src/routes/mod.rs", SourceRoot("crates/api", "api"), "api::routes"),
        ("tests/checkout.rs", SOURCE_ROOT, "shop_core::tests::checkout"),
        ("src/util.rs", SourceRoot(), "crate::util"),
    ],
)
def test_module_names_follow_the_crate(path: str, root: SourceRoot, module_name: str) -> None:
    assert module_name_for_path(path, "rust", root) == module_name


@pytest.mark.parametrize(
    ("written", "module_name", "absolute"),
    [
        ("crate::billing::Invoice", "shop::storage", "shop::billing::Invoice"),
        ("self::tax::Rate", "shop::billing", "shop::billing::tax::Rate"),
        ("super::Invoice", "shop::billing::tax", "shop::billing::Invoice"),
        ("super::super::util", "shop::a::b", "shop::util"),
        ("super::x", "shop", None),
        ("std::fmt", "shop::billing", "std::fmt"),
        ("::serde::Serialize", "shop", "serde::Serialize"),
    ],
)
def test_use_paths_resolve_against_the_importing_module(
    written: str, module_name: str, absolute: str | None
) -> None:
    assert resolve_rust_import(written, module_name, False) == absolute


def test_types_impls_and_methods_are_qualified_by_module_path(
    analyses: dict[str, FileAnalysis],
) -> None:
    analysis = analyses[BILLING_RS]
    assert analysis.parse_errors == 0
    assert analysis.module_name == BILLING
    symbols = symbols_by_name(analysis)
    expected = {
        BILLING: ("module", "", 1, 73),
        f"{BILLING}::Named": ("trait", "Named", 10, 12),
        f"{BILLING}::Named::name": ("signature", "Named::name", 11, 11),
        f"{BILLING}::Priced": ("trait", "Priced", 15, 23),
        # A default method is a definition; `fn net(&self) -> u64;` is only a signature.
        f"{BILLING}::Priced::net": ("signature", "Priced::net", 17, 17),
        f"{BILLING}::Priced::gross": ("method", "Priced::gross", 20, 22),
        f"{BILLING}::Invoice": ("struct", "Invoice", 27, 30),
        f"{BILLING}::LineItem": ("struct", "LineItem", 34, 37),
        f"{BILLING}::Invoice::new": ("method", "Invoice::new", 41, 46),
        f"{BILLING}::Invoice::add": ("method", "Invoice::add", 48, 50),
        f"{BILLING}::Invoice::subtotal": ("method", "Invoice::subtotal", 52, 54),
        # Trait impls add their methods to the implementing type.
        f"{BILLING}::Invoice::name": ("method", "Invoice::name", 58, 60),
        f"{BILLING}::Invoice::net": ("method", "Invoice::net", 64, 66),
        f"{BILLING}::Invoice::fmt": ("method", "Invoice::fmt", 70, 72),
    }
    assert {
        name: (s.kind, s.scope_name, s.start_line, s.end_line) for name, s in symbols.items()
    } == expected
    assert symbols[f"{BILLING}::Invoice::new"].parent_qualified_name == f"{BILLING}::Invoice"
    tax = symbols_by_name(analyses[TAX_RS])
    assert tax[f"{TAX}::Rate"].kind == "struct"  # a tuple struct
    assert tax[f"{TAX}::Rate::standard"].scope_name == "Rate::standard"
    assert tax[f"{TAX}::with_vat"].kind == "function"
    assert tax[f"{TAX}::tests"].kind == "namespace"
    assert f"{TAX}::tests::rounds_half_up" in tax


def test_an_impl_before_its_struct_leaves_the_struct_a_symbol() -> None:
    source = b"impl Unit {\n    fn make() -> Self { Unit }\n}\n\npub struct Unit;\n"
    symbols = symbols_by_name(extract("src/unit.rs", source, "rust", root=SOURCE_ROOT))
    assert symbols["shop_core::unit::Unit"].kind == "struct"
    assert symbols["shop_core::unit::Unit"].start_line == 5
    assert symbols["shop_core::unit::Unit::make"].kind == "method"


def test_signatures_and_rustdoc(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[BILLING_RS])
    invoice = symbols[f"{BILLING}::Invoice"]
    # The doc comment sits above the `#[derive]` attribute.
    assert invoice.docstring == "A bill for one customer's order."
    assert invoice.signature == "pub struct Invoice"
    assert symbols[f"{BILLING}::Priced"].signature == "pub trait Priced: Named"
    new = symbols[f"{BILLING}::Invoice::new"]
    assert new.signature == "pub fn new(customer: &str) -> Self"
    assert new.docstring == "Starts an empty invoice."
    assert symbols[f"{BILLING}::Invoice::add"].docstring is None
    # `//!` inner docs document the module.
    assert symbols[BILLING].docstring == "Invoices and what can be priced."
    lib = symbols_by_name(analyses[LIB_RS])
    assert lib[CRATE].docstring == (
        "Core of the shop: billing and storage.\n\nEverything is priced in cents."
    )


def test_contains_imports_and_trait_inheritance(analyses: dict[str, FileAnalysis]) -> None:
    billing = analyses[BILLING_RS]
    contains = relation_triples(billing, "contains")
    assert (BILLING, "Invoice", f"{BILLING}::Invoice") in contains
    assert (f"{BILLING}::Invoice", "net", f"{BILLING}::Invoice::net") in contains
    assert (f"{BILLING}::Priced", "gross", f"{BILLING}::Priced::gross") in contains
    assert relation_triples(billing, "inherits") == {
        (f"{BILLING}::Priced", "Named", f"{BILLING}::Named"),
        (f"{BILLING}::Invoice", "Named", f"{BILLING}::Named"),
        (f"{BILLING}::Invoice", "Priced", f"{BILLING}::Priced"),
        (f"{BILLING}::Invoice", "fmt::Display", "std::fmt::Display"),
    }
    imports = relation_triples(billing, "imports")
    assert (BILLING, f"{TAX}", TAX) in imports  # `mod tax;`
    assert (BILLING, "self::tax::Rate", f"{TAX}::Rate") in imports
    assert (BILLING, "std::fmt", "std::fmt") in imports
    storage = relation_triples(analyses[STORAGE_RS], "imports")
    assert (STORAGE, "crate::billing::tax", TAX) in storage
    assert (STORAGE, "crate::billing::Invoice", f"{BILLING}::Invoice") in storage
    assert (STORAGE, "crate::billing::Priced", f"{BILLING}::Priced") in storage
    lib = relation_triples(analyses[LIB_RS], "imports")
    assert (CRATE, BILLING, BILLING) in lib
    assert (CRATE, STORAGE, STORAGE) in lib


def test_calls_resolve_through_uses_self_and_modules(analyses: dict[str, FileAnalysis]) -> None:
    storage = relation_triples(analyses[STORAGE_RS], "calls")
    reopen = f"{STORAGE}::Store::reopen"
    assert (reopen, "Invoice::new", f"{BILLING}::Invoice::new") in storage
    assert (reopen, "tax::with_vat", f"{TAX}::with_vat") in storage
    assert (reopen, "tax::Rate::standard", f"{TAX}::Rate::standard") in storage
    # A method call on a local value names no definition.
    assert (f"{STORAGE}::Store::save", "invoice.gross", None) in storage
    billing = relation_triples(analyses[BILLING_RS], "calls")
    assert (f"{BILLING}::Invoice::net", "self.subtotal", f"{BILLING}::Invoice::subtotal") in billing
    assert (f"{BILLING}::Priced::gross", "Rate::standard", f"{TAX}::Rate::standard") in billing
    assert (f"{BILLING}::Priced::gross", "tax::with_vat", f"{TAX}::with_vat") in billing
    tax = relation_triples(analyses[TAX_RS], "calls")
    assert (f"{TAX}::with_vat", "round_cents", f"{TAX}::round_cents") in tax
    assert (f"{TAX}::Rate::standard", "Rate", f"{TAX}::Rate") in tax


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = analyses[BILLING_RS].chunks
    new = next(c for c in chunks if c.symbol_qualified_name == f"{BILLING}::Invoice::new")
    assert new.kind == "method"
    assert (new.start_line, new.end_line) == (41, 46)
    source = (ROOT / BILLING_RS).read_text().splitlines()
    assert new.text == "\n".join(source[40:46])
    # The struct and each impl block get an outline under the type's name.
    outlines = [
        (c.start_line, c.end_line)
        for c in chunks
        if c.kind == "class_header" and c.symbol_qualified_name == f"{BILLING}::Invoice"
    ]
    assert outlines == [(27, 30), (39, 55), (57, 61), (63, 67), (69, 73)]
    impl = next(c for c in chunks if c.kind == "class_header" and c.start_line == 39)
    assert impl.text.startswith("impl Invoice {\n")
    assert "    pub fn new(customer: &str) -> Self ..." in impl.text
    assert "self.lines.push" not in impl.text


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
    indexes = await store_tree(sqlite_ast_store, analyses, "rust")
    storage, billing, tax = indexes[STORAGE_RS], indexes[BILLING_RS], indexes[TAX_RS]
    calls = _resolved(storage, "calls")
    assert calls[f"{BILLING}::Invoice::new"] == _node_id(billing, f"{BILLING}::Invoice::new")
    assert calls[f"{TAX}::with_vat"] == _node_id(tax, f"{TAX}::with_vat")
    assert _resolved(billing, "inherits")[f"{BILLING}::Priced"] == _node_id(
        billing, f"{BILLING}::Priced"
    )
    file_id = {path: fixture_version(path, "rust").file_id for path in indexes}
    # `mod billing;` depends on the child module's file, `use` paths on the defining file.
    lib = {(d.target_module, d.target_file_id) for d in indexes[LIB_RS].dependencies}
    assert (BILLING, file_id[BILLING_RS]) in lib
    assert (STORAGE, file_id[STORAGE_RS]) in lib
    uses = {(d.target_module, d.target_file_id) for d in storage.dependencies}
    assert (TAX, file_id[TAX_RS]) in uses
    assert (BILLING, file_id[BILLING_RS]) in uses
    assert ("std::collections::HashMap", "") in uses
    # `use self::tax::Rate` names a type: it depends on the file defining it.
    rate = {(d.target_module, d.target_file_id) for d in billing.dependencies}
    assert (f"{TAX}::Rate", file_id[TAX_RS]) in rate

    assert await sqlite_ast_store.retract_file(fixture_version(BILLING_RS, "rust", seq=2))
    after = await sqlite_ast_store.file_index(file_id[STORAGE_RS])
    assert after is not None
    calls_after = _resolved(after, "calls")
    assert calls_after[f"{BILLING}::Invoice::new"] == ""
    assert calls_after[f"{TAX}::with_vat"] != ""
    targets = {d.target_file_id for d in after.dependencies}
    assert file_id[BILLING_RS] not in targets
    assert file_id[TAX_RS] in targets


# tokio's way of gating modules: items inside item-level macros, nested, with braces in
# strings, chars, raw strings and comments that must not close the macro early.
GATED = b"""//! Cooperative scheduling.
cfg_rt! {
    /// Runs `f` with a budget.
    pub(crate) fn budget<R>(f: impl FnOnce() -> R) -> R {
        let brace = "}"; let c = '}'; let raw: &'static str = r#"}"#; // }
        /* } { */
        with_budget(Budget::initial(), f)
    }

    cfg_net! {
        impl Budget {
            pub fn has_remaining(&self) -> bool { self.0 > 0 }
        }
    }
}

macro_rules! cfg_rt {
    ($($item:item)*) => { $( #[cfg(feature = "rt")] $item )* }
}

fn poll_proceed() {
    select! {
        x = ready() => {}
    }
}
"""


def test_items_inside_item_level_macros_are_read_as_items_at_their_lines() -> None:
    analysis = extract("src/runtime/coop.rs", GATED, "rust", root=SOURCE_ROOT)
    symbols = {s.qualified_name: s for s in analysis.symbols}
    budget = symbols["shop_core::runtime::coop::budget"]
    assert (budget.kind, budget.start_line, budget.end_line) == ("function", 4, 8)
    assert budget.docstring == "Runs `f` with a budget."
    remaining = symbols["shop_core::runtime::coop::Budget::has_remaining"]
    assert (remaining.kind, remaining.start_line, remaining.end_line) == ("method", 12, 12)
    assert "shop_core::runtime::coop::poll_proceed" in symbols
    assert analysis.parse_errors == 0
    # Names, signatures and chunks are read from the source as written.
    assert budget.signature.startswith("pub(crate) fn budget<R>")
    chunk = next(c for c in analysis.chunks if c.symbol_qualified_name == budget.qualified_name)
    assert chunk.text.lstrip().startswith("pub(crate) fn budget<R>")
    calls = {
        (r.source_qualified_name, r.target_name) for r in analysis.relations if r.kind == "calls"
    }
    assert ("shop_core::runtime::coop::budget", "with_budget") in calls


def test_only_item_level_macros_with_items_inside_are_unwrapped() -> None:
    unwrapped = unwrap_item_macros(GATED)
    assert len(unwrapped) == len(GATED)
    assert unwrapped.count(b"\n") == GATED.count(b"\n")
    lines = unwrapped.decode().splitlines()
    # cfg_rt! {, cfg_net! { and their closing braces are blank lines now.
    assert [lines[i].strip() for i in (1, 9, 13, 14)] == ["", "", "", ""]
    assert 'let brace = "}"' in lines[4]  # strings, chars and comments are untouched
    # A macro definition and a macro whose body is no item stay as written.
    assert "macro_rules! cfg_rt {" in lines[16]
    assert "select! {" in lines[21]
    # A macro never closed is left alone.
    unclosed = b"cfg_rt! {\n    pub fn f() {}\n"
    assert unwrap_item_macros(unclosed) == unclosed
