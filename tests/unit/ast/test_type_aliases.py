"""Type aliases are symbols (kind type_alias) in every language that writes them: found by
name with their doc comment, no chunk of their own (their text stays in the chunks around
them), and never the name a same-named type loses to."""

import pytest
from language_fixtures import fixture_version, store_tree

from locus.ast.adapters.store import AstStore, SymbolQuery
from locus.ast.domain import extract

pytestmark = pytest.mark.unit

CASES = [
    (
        "typescript",
        "source/types/options.ts",
        b"/** Options for ky. */\nexport type KyOptions = {\n\tretry?: number;\n"
        b"\ttimeout?: number;\n};\n"
        b"export function ky(o: KyOptions) {\n\treturn o;\n}\n",
        "source/types/options.KyOptions",
        (2, 5),
        "Options for ky.",
    ),
    (
        "kotlin",
        "src/main/kotlin/com/acme/Money.kt",
        b"package com.acme\n\n/** Money in cents. */\ntypealias Cents = Long\n\n"
        b"fun pay(c: Cents) = c\n",
        "com.acme.Cents",
        (4, 4),
        "Money in cents.",
    ),
    (
        "scala",
        "src/main/scala/com/acme/Machine.scala",
        b"package com.acme\n\nobject Machine {\n  /** A state. */\n  type State = Long\n"
        b"  def step(s: State): State = s + 1\n}\n",
        "com.acme.Machine.State",
        (5, 5),
        "A state.",
    ),
    (
        "rust",
        "src/error.rs",
        b"/// The crate's result.\npub type Result<T> = std::result::Result<T, Error>;\n\n"
        b"pub fn run() -> Result<()> {\n    Ok(())\n}\n",
        "crate::error::Result",
        (2, 2),
        "The crate's result.",
    ),
    (
        "go",
        "orders/ids.go",
        b"package orders\n\n// ID names an order.\ntype ID = string\n\nfunc Parse(s string) ID {\n"
        b"\treturn s\n}\n",
        "orders.ID",
        (4, 4),
        "ID names an order.",
    ),
    (
        "cpp",
        "include/acme/ids.hpp",
        b"namespace acme {\n/// An order's id.\nusing Id = unsigned long;\n"
        b"int parse(const char* s) {\n"
        b"  using local = int;  // a function's own alias is no symbol\n  return 0;\n}\n}\n",
        "acme::Id",
        (3, 3),
        "An order's id.",
    ),
]


@pytest.mark.parametrize(("language", "path", "source", "name", "lines", "doc"), CASES)
def test_a_type_alias_is_a_symbol_without_a_chunk(
    language: str, path: str, source: bytes, name: str, lines: tuple[int, int], doc: str
) -> None:
    analysis = extract(path, source, language)
    assert analysis.parse_errors == 0
    symbols = {s.qualified_name: s for s in analysis.symbols}
    alias = symbols[name]
    assert (alias.kind, (alias.start_line, alias.end_line), alias.docstring) == (
        "type_alias",
        lines,
        doc,
    )
    assert [s.kind for s in analysis.symbols].count("type_alias") == 1  # no local alias
    # Its text stays in a chunk around it, none is its own.
    assert all(chunk.symbol_qualified_name != name for chunk in analysis.chunks)
    held = [c for c in analysis.chunks if c.start_line <= lines[0] and lines[1] <= c.end_line]
    assert held


def test_a_long_alias_signs_with_its_first_line() -> None:
    members = "".join(f"  option{i}?: number;\n" for i in range(40)).encode()
    source = b"export type Options = {\n" + members + b"};\n"
    (alias,) = [s for s in extract("src/o.ts", source, "typescript").symbols if s.kind != "module"]
    assert alias.signature == "type Options = { …"


def test_a_type_keeps_its_name_beside_an_alias_of_another_branch() -> None:
    # fmt: `using utc_clock = std::chrono::utc_clock;` in one preprocessor branch, a struct of
    # that name in the other: the struct is the symbol.
    source = b"""#if defined(HAS_UTC)
using utc_clock = std::chrono::utc_clock;
#else
struct utc_clock {
  void now();
};
#endif
"""
    symbols = {s.qualified_name: s for s in extract("include/c.h", source, "cpp").symbols}
    assert symbols["utc_clock"].kind == "struct"


async def test_found_by_name_and_left_out_of_locates_lookups(sqlite_ast_store: AstStore) -> None:
    path = "source/types/options.ts"
    source = b"export type Options = { retry?: number };\nexport function options() {}\n"
    await store_tree(sqlite_ast_store, {path: extract(path, source, "typescript")}, "typescript")
    project = fixture_version(path, "typescript").project_id

    async def found(kind: str = "", without_signatures: bool = False) -> list[tuple[str, str]]:
        query = SymbolQuery(
            project, "options", kind, "", exact=True, without_signatures=without_signatures
        )
        found = await sqlite_ast_store.find_symbols(query, 0, 10)
        return sorted((s.kind, s.qualified_name) for s, _ in found)

    alias = ("type_alias", "source/types/options.Options")
    function = ("function", "source/types/options.options")
    module = ("module", "source/types/options")
    assert await found() == [function, module, alias]
    assert await found("type_alias") == [alias]
    # Locate's lookups (definitions only) leave it out.
    assert await found(without_signatures=True) == [function, module]
