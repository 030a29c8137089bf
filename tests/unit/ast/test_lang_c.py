"""C through the generic extractor and the real SQLite store: a small codec library (a header
with an include guard, a typedef'd operations table and a prototype; its implementation with
static helpers; a program in another directory calling it through a relative include)."""

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
from locus.ast.domain.specs.c_family import blank_c_annotation_macros

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "c"
MEM_H = "lib/common/mem.h"
CODEC_H = "lib/compress/codec.h"
CODEC_C = "lib/compress/codec.c"
CLI_C = "programs/cli.c"
CODEC_TEST_C = "tests/codec_test.c"  # includes the headers through lib/, as -Ilib


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "c")


def test_module_names_are_repository_paths() -> None:
    assert module_name_for_path(CODEC_C, "c") == CODEC_C
    assert module_name_for_path("./src\\main.c", "c") == "src/main.c"


def test_functions_and_types_have_global_names(analyses: dict[str, FileAnalysis]) -> None:
    analysis = analyses[CODEC_C]
    assert analysis.parse_errors == 0
    symbols = symbols_by_name(analysis)
    assert {(name, s.kind, s.start_line, s.end_line) for name, s in symbols.items()} == {
        (CODEC_C, "module", 1, 39),
        ("window", "struct", 5, 8),
        ("copy_block", "function", 10, 14),
        ("hash_block", "function", 16, 19),
        ("codec_compress", "function", 21, 32),
        ("fast_compress", "function", 34, 37),
    }
    compress = symbols["codec_compress"]
    assert compress.parent_qualified_name == CODEC_C
    assert compress.signature == (
        "size_t codec_compress(void* dst, size_t capacity, const void* src, size_t size,"
        " codec_level level)"
    )


def test_header_prototypes_are_signatures_and_typedefs_name_anonymous_types(
    analyses: dict[str, FileAnalysis],
) -> None:
    symbols = symbols_by_name(analyses[CODEC_H])
    assert set(symbols) == {CODEC_H, "codec_ops", "codec_level", "codec_compress"}
    prototype = symbols["codec_compress"]
    assert (prototype.kind, prototype.start_line, prototype.end_line) == ("signature", 15, 16)
    assert prototype.signature == (
        "size_t codec_compress(void* dst, size_t capacity, const void* src, size_t size,"
        " codec_level level)"
    )
    assert prototype.docstring == "Compresses `size` bytes of `src` into `dst` with `level`."
    # A declaration has no chunk: the header's prototype stays in its module chunk.
    assert not [c for c in analyses[CODEC_H].chunks if c.symbol_qualified_name == "codec_compress"]
    ops = symbols["codec_ops"]
    assert (ops.kind, ops.start_line, ops.end_line) == ("struct", 7, 10)
    assert ops.docstring == "What every codec implements: a table of operations."
    assert symbols["codec_level"].kind == "enum"


def test_doc_comments_inside_include_guards(analyses: dict[str, FileAnalysis]) -> None:
    read32 = symbols_by_name(analyses[MEM_H])["mem_read32"]
    assert (read32.kind, read32.start_line, read32.end_line) == ("function", 9, 13)
    assert read32.docstring == "Reads a little-endian 32-bit value from `p`."
    assert read32.signature == "static U32 mem_read32(const void* p)"


def test_includes_resolve_against_the_including_directory(
    analyses: dict[str, FileAnalysis],
) -> None:
    assert relation_triples(analyses[CODEC_C], "imports") == {
        (CODEC_C, "codec.h", CODEC_H),
        (CODEC_C, "../common/mem.h", MEM_H),
        (CODEC_C, "<string.h>", None),  # the system's
    }
    assert [d.target_module for d in analyses[CODEC_C].dependencies] == [CODEC_H, MEM_H]
    assert [d.target_module for d in analyses[CLI_C].dependencies] == [CODEC_H]
    # A quoted include names the path beside its includer; an angle include of a header that
    # is not the system's its path as written, in brackets.
    assert [d.target_module for d in analyses[CODEC_TEST_C].dependencies] == [
        "tests/compress/codec.h",
        "<common/mem.h>",
    ]


def test_calls_name_global_functions_and_leave_function_pointers_unresolved(
    analyses: dict[str, FileAnalysis],
) -> None:
    assert relation_triples(analyses[CODEC_C], "calls") == {
        ("copy_block", "memcpy", "memcpy"),
        ("hash_block", "mem_read32", "mem_read32"),
        ("codec_compress", "hash_block", "hash_block"),
        ("codec_compress", "copy_block", "copy_block"),
        ("fast_compress", "codec_compress", "codec_compress"),
    }
    assert ("run", "ops->compress", None) in relation_triples(analyses[CLI_C], "calls")


def test_chunks_are_symbol_aligned_inside_include_guards(
    analyses: dict[str, FileAnalysis],
) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[MEM_H].chunks}
    read32 = chunks[("function", "mem_read32")]
    source = (ROOT / MEM_H).read_text().splitlines()
    assert (read32.start_line, read32.end_line) == (9, 13)
    assert read32.text == "\n".join(source[8:13])
    modules = [(c.start_line, c.end_line) for c in analyses[MEM_H].chunks if c.kind == "module"]
    assert modules == [(1, 8), (15, 15)]
    struct = {(c.kind, c.symbol_qualified_name): c for c in analyses[CODEC_C].chunks}
    assert struct[("class_header", "window")].text.startswith("struct window {\n")


def test_a_header_holding_cpp_is_analysed_as_cpp() -> None:
    source = b"namespace fmt {\nclass buffer {\n public:\n  void push() {}\n};\n}\n"
    analysis = extract("include/fmt/base.h", source, "c")
    assert analysis.language == "cpp"
    assert "fmt::buffer::push" in symbols_by_name(analysis)
    plain = extract("include/x.h", b'#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n', "c")
    assert plain.language == "c"


def test_annotation_macros_before_functions_are_read_as_written() -> None:
    source = b"MEM_STATIC U32 MEM_read(void) { return helper(); }\nint ok(void) { return 1; }\n"
    analysis = extract("lib/mem.c", source, "c")
    assert analysis.parse_errors == 0  # the parser read `MEM_STATIC` as blanks
    symbols = symbols_by_name(analysis)
    assert symbols["MEM_read"].kind == "function"
    # The definition starts after the annotation, as it would after the preprocessor.
    assert symbols["MEM_read"].signature == "U32 MEM_read(void)"
    assert (symbols["ok"].start_line, symbols["ok"].end_line) == (2, 2)
    assert ("MEM_read", "helper", "helper") in relation_triples(analysis, "calls")


def test_annotations_before_a_macro_that_writes_a_definition_hide_nothing_after_it() -> None:
    """xxhash.h (vendored by zstd and many others) writes one accumulator per instruction set
    with a macro: `XXH_FORCE_INLINE XXH_TARGET_AVX2 XXH3_ACCUMULATE_TEMPLATE(avx2)`. With the
    annotations in place tree-sitter lost the functions after each such line."""
    source = (
        b"#define XXH3_ACCUMULATE_TEMPLATE(name) void XXH3_accumulate_##name(int n) { }\n"
        b"XXH_FORCE_INLINE XXH_TARGET_AVX2 XXH3_ACCUMULATE_TEMPLATE(avx2)\n"
        b"\n"
        b"XXH_FORCE_INLINE XXH_TARGET_AVX2 void\n"
        b"XXH3_scrambleAcc_avx2(void* acc, const void* secret)\n"
        b"{\n    helper(acc);\n}\n"
        b"XXH_FORCE_INLINE XXH3_ACCUMULATE_TEMPLATE(scalar)\n"
        b"XXH_PUBLIC_API XXH32_hash_t XXH32 (const void* input, unsigned len)\n"
        b"{\n    return 0;\n}\n"
    )
    analysis = extract("lib/common/xxhash.h", source, "c")
    assert analysis.parse_errors == 0
    symbols = symbols_by_name(analysis)
    assert (
        symbols["XXH3_scrambleAcc_avx2"].start_line,
        symbols["XXH3_scrambleAcc_avx2"].end_line,
    ) == (4, 8)
    assert (symbols["XXH32"].start_line, symbols["XXH32"].end_line) == (10, 13)
    # The line is blanked whole (the parser cannot read what the macro writes); a macro call
    # that ends a statement stays.
    assert blank_c_annotation_macros(source).splitlines()[1].strip() == b""
    statement = b"void f(void) {\n    RETRY_ON_EINTR LOG_ERROR(x);\n}\n"
    assert blank_c_annotation_macros(statement) is statement


def test_macros_the_parser_cannot_read_degrade_gracefully() -> None:
    # A function-like annotation is not blanked: tree-sitter recovers what it can.
    source = (
        b'ZSTD_DEPRECATED("use v2") size_t old(void) { return helper(); }\n'
        b"int ok(void) { return 1; }\n"
    )
    analysis = extract("lib/old.c", source, "c")
    assert analysis.parse_errors > 0
    symbols = symbols_by_name(analysis)
    assert (symbols["ok"].start_line, symbols["ok"].end_line) == (2, 2)
    assert any(caller.endswith("old") for caller, _, _ in relation_triples(analysis, "calls"))


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
    indexes = await store_tree(sqlite_ast_store, analyses, "c")
    cli, codec = indexes[CLI_C], indexes[CODEC_C]
    assert _resolved(cli, "calls")["codec_compress"] == _node_id(codec, "codec_compress")
    assert _resolved(codec, "calls")["mem_read32"] == _node_id(indexes[MEM_H], "mem_read32")
    assert _resolved(codec, "calls")["memcpy"] == ""
    dependencies = {(d.target_module, d.target_file_id) for d in cli.dependencies}
    assert dependencies == {(CODEC_H, fixture_version(CODEC_H, "c").file_id)}
    # Through the include directory (-Ilib): the test's `"compress/codec.h"` and
    # `<common/mem.h>` name the library's headers.
    dependencies = {(d.target_module, d.target_file_id) for d in indexes[CODEC_TEST_C].dependencies}
    assert dependencies == {
        (CODEC_H, fixture_version(CODEC_H, "c").file_id),
        (MEM_H, fixture_version(MEM_H, "c").file_id),
    }

    # Without its definition, the call names the prototype the caller includes; without that
    # header either, nothing.
    assert await sqlite_ast_store.retract_file(fixture_version(CODEC_C, "c", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(CLI_C, "c").file_id)
    assert after is not None
    prototype = _node_id(indexes[CODEC_H], "codec_compress")
    assert _resolved(after, "calls")["codec_compress"] == prototype
    assert await sqlite_ast_store.retract_file(fixture_version(CODEC_H, "c", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(CLI_C, "c").file_id)
    assert after is not None
    assert {(d.target_module, d.target_file_id) for d in after.dependencies} == {(CODEC_H, "")}
    assert _resolved(after, "calls")["codec_compress"] == ""


def test_a_line_of_thousands_of_macro_words_is_read_as_written() -> None:
    """A generated table on one line (20,000 upper-case words and a call): no declaration
    follows any of them, so nothing is blanked — and each word is judged by the first few
    hundred bytes of its line, not by everything before it (that took 25 s for this line)."""
    table = b"A_B " * 20_000 + b"C_D(x);\n" + b"MEM_STATIC U32 MEM_read(void) { return 1; }\n"
    blanked = blank_c_annotation_macros(table)
    assert blanked.startswith(b"A_B " * 20_000 + b"C_D(x);\n")
    assert blanked.endswith(b"           U32 MEM_read(void) { return 1; }\n")
