"""C++ through the generic extractor and the real SQLite store: a `shapes` library (an
interface class in a `.h` header, which ingestion calls C; a derived class with a nested
struct and a class template in a `.hpp`; out-of-line constructor, destructor, methods and a
template member in a `.cpp`; a program in another directory calling into the namespace)."""

from dataclasses import replace

import pytest
from language_fixtures import (
    AST_FIXTURES,
    fixture_version,
    relation_triples,
    store_tree,
    symbols_by_name,
)
from tree_sitter import Parser

from locus.ast.adapters.store import AstStore, FileIndex
from locus.ast.domain import FileAnalysis, extract
from locus.ast.domain.extraction import parse_tree
from locus.ast.domain.languages import compiled_language
from locus.ast.domain.specs.c_family import (
    blank_annotation_macros,
    blank_c_annotation_macros,
    cpp_definition_name,
)

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "cpp"
SHAPE_H = "include/shapes/shape.h"
CIRCLE_HPP = "include/shapes/circle.hpp"
CIRCLE_CPP = "src/circle.cpp"
MAIN_CPP = "src/main.cpp"
CIRCLE_TEST = "tests/circle_test.cpp"  # includes the headers through include/, as -Iinclude


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    """Each file under the language ingestion gives it (`.h` is C)."""
    return {
        path: extract(path, (ROOT / path).read_bytes(), "c" if path.endswith(".h") else "cpp")
        for path in (SHAPE_H, CIRCLE_HPP, CIRCLE_CPP, MAIN_CPP, CIRCLE_TEST)
    }


def test_header_is_analysed_as_cpp_with_namespaces_as_containers(
    analyses: dict[str, FileAnalysis],
) -> None:
    analysis = analyses[SHAPE_H]
    assert (analysis.language, analysis.module_name, analysis.parse_errors) == ("cpp", SHAPE_H, 0)
    symbols = symbols_by_name(analysis)
    # The pure virtual `area` and the `total_area` prototype are declarations only: signatures,
    # with no chunk of their own.
    assert {(n, s.kind, s.start_line, s.end_line) for n, s in symbols.items()} == {
        (SHAPE_H, "module", 1, 20),
        ("shapes", "namespace", 6, 18),
        ("shapes::Shape", "class", 9, 14),
        ("shapes::Shape::area", "signature", 12, 12),
        ("shapes::Shape::name", "method", 13, 13),
        ("shapes::total_area", "signature", 16, 16),
    }
    assert symbols["shapes::Shape::area"].signature == "virtual double area() const = 0"
    assert symbols["shapes::Shape::area"].parent_qualified_name == "shapes::Shape"
    assert {c.symbol_qualified_name for c in analysis.chunks}.isdisjoint(
        {"shapes::Shape::area", "shapes::total_area"}
    )
    shape = symbols["shapes::Shape"]
    assert shape.docstring == "The interface every shape implements."
    assert (shape.scope_name, shape.parent_qualified_name) == ("shapes::Shape", "shapes")


def test_nested_types_and_templates_in_class_bodies(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[CIRCLE_HPP])
    bounds = symbols["shapes::Circle::Bounds"]
    assert (bounds.kind, bounds.start_line, bounds.end_line) == ("struct", 16, 19)
    assert bounds.docstring == "Axis-aligned bounds of a circle."
    assert symbols["shapes::Circle::Bounds::height"].kind == "method"
    scaled = symbols["shapes::Scaled"]
    # `template <typename T>` starts the definition.
    assert (scaled.kind, scaled.start_line, scaled.end_line) == ("struct", 27, 31)
    assert relation_triples(analyses[CIRCLE_HPP], "inherits") == {
        ("shapes::Circle", "Shape", "shapes::Shape")
    }


def test_out_of_line_definitions_take_their_scope_from_the_written_name(
    analyses: dict[str, FileAnalysis],
) -> None:
    symbols = symbols_by_name(analyses[CIRCLE_CPP])
    expected = {
        "shapes::Circle::Circle": ("constructor", 10, 10, "shapes::Circle"),
        "shapes::Circle::~Circle": ("method", 12, 12, "shapes::Circle"),
        "shapes::Circle::area": ("method", 15, 17, "shapes::Circle"),
        "shapes::Circle::bounds": ("method", 19, 21, "shapes::Circle"),
        "shapes::Scaled::twice": ("method", 23, 26, "shapes::Scaled"),
        "shapes::total_area": ("function", 28, 30, "shapes"),
        "shapes::operator==": ("function", 32, 34, "shapes"),
    }
    for name, (kind, start, end, parent) in expected.items():
        symbol = symbols[name]
        assert (symbol.kind, symbol.start_line, symbol.end_line) == (kind, start, end), name
        assert symbol.parent_qualified_name == parent, name
    area = symbols["shapes::Circle::area"]
    assert area.scope_name == "shapes::Circle::area"
    assert area.signature == "double Circle::area() const"
    assert area.docstring == "The area: pi times the radius squared."
    assert ("shapes::Circle", "area", "shapes::Circle::area") in relation_triples(
        analyses[CIRCLE_CPP], "contains"
    )


def test_calls_resolve_within_namespaces_and_leave_members_of_objects_alone(
    analyses: dict[str, FileAnalysis],
) -> None:
    calls = relation_triples(analyses[CIRCLE_CPP], "calls")
    assert ("shapes::operator==", "total_area", "shapes::total_area") in calls
    assert ("shapes::total_area", "a.area", None) in calls
    assert ("shapes::Circle::area", "std::pow", None) in calls
    assert relation_triples(analyses[MAIN_CPP], "calls") >= {
        ("main", "report", "report"),
        ("main", "shapes::total_area", "shapes::total_area"),
    }


def test_includes(analyses: dict[str, FileAnalysis]) -> None:
    assert relation_triples(analyses[MAIN_CPP], "imports") == {
        (MAIN_CPP, "<iostream>", None),  # the standard library's
        (MAIN_CPP, "../include/shapes/circle.hpp", CIRCLE_HPP),
    }
    assert [d.target_module for d in analyses[CIRCLE_HPP].dependencies] == [SHAPE_H]
    # An angle include names its path as written, in brackets; a quoted one the path beside
    # its includer.
    assert [d.target_module for d in analyses[CIRCLE_TEST].dependencies] == [
        "<shapes/circle.hpp>",
        "tests/shapes/shape.h",
    ]


def test_a_cast_is_no_call() -> None:
    source = b"""namespace a {
int g(int);
int f(long x) {
  int y = static_cast<int>(x);
  char* bytes = reinterpret_cast<char*>(&y);
  return g(const_cast<int&>(y)) + (dynamic_cast<int*>(nullptr) != nullptr) + to<int>(bytes);
}
}  // namespace a
"""
    analysis = extract("src/a.cc", source, "cpp")
    assert relation_triples(analysis, "calls") == {
        ("a::f", "g", "a::g"),
        ("a::f", "to<int>", "a::to"),
    }


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = {(c.kind, c.symbol_qualified_name): c for c in analyses[CIRCLE_CPP].chunks}
    area = chunks[("method", "shapes::Circle::area")]
    source = (ROOT / CIRCLE_CPP).read_text().splitlines()
    assert (area.start_line, area.end_line) == (15, 17)
    assert area.text == "\n".join(source[14:17])
    twice = chunks[("method", "shapes::Scaled::twice")]
    assert twice.text.startswith("template <typename T>\nT Scaled<T>::twice() const {")
    outline = {(c.kind, c.symbol_qualified_name): c for c in analyses[CIRCLE_HPP].chunks}[
        ("class_header", "shapes::Circle")
    ]
    assert outline.text.startswith("class Circle : public Shape {\n public:\n")
    assert "  std::string name() const override ..." in outline.text
    # A function in an anonymous namespace still gets its own chunk.
    report = {(c.kind, c.symbol_qualified_name): c for c in analyses[MAIN_CPP].chunks}[
        ("function", "report")
    ]
    assert (report.start_line, report.end_line) == (7, 9)


async def test_an_include_names_a_path_never_a_name(sqlite_ast_store: AstStore) -> None:
    # The project declares `class ostream` and `format`; `#include <ostream>` and
    # `#include <format>` are still the standard library's, and `format(...)` in namespace
    # `text` still looks `text::format` up first. `<fmt/os.h>` is the project's header.
    sources = {
        "include/fmt/os.h": b"class ostream {\n public:\n  void flush();\n};\nint format(int);\n",
        "src/os.cc": (
            b"#include <ostream>\n#include <format>\n#include <fmt/os.h>\n\n"
            b"namespace text {\nint format(int);\nint f() { return format(1); }\n}\n"
        ),
    }
    analyses = {p: extract(p, data, "cpp") for p, data in sources.items()}
    assert relation_triples(analyses["src/os.cc"], "calls") == {
        ("text::f", "format", "text::format")
    }
    indexes = await store_tree(sqlite_ast_store, analyses, "cpp")
    os_cc = indexes["src/os.cc"]
    assert {(d.target_module, d.target_file_id) for d in os_cc.dependencies} == {
        ("include/fmt/os.h", fixture_version("include/fmt/os.h", "cpp").file_id)
    }
    imports = {r.relation.target_name: r.target_node_id for r in os_cc.relations}
    assert imports["<ostream>"] == imports["<format>"] == ""  # not `class ostream`
    assert imports["<fmt/os.h>"] == ""  # a path: no symbol of that name


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
    indexes = await store_tree(sqlite_ast_store, analyses, "cpp")
    main, circle = indexes[MAIN_CPP], indexes[CIRCLE_CPP]
    total = _node_id(circle, "shapes::total_area")
    assert _resolved(main, "calls")["shapes::total_area"] == total
    assert _resolved(indexes[CIRCLE_HPP], "inherits")["shapes::Shape"] == _node_id(
        indexes[SHAPE_H], "shapes::Shape"
    )
    dependencies = {(d.target_module, d.target_file_id) for d in main.dependencies}
    assert dependencies == {(CIRCLE_HPP, fixture_version(CIRCLE_HPP, "cpp").file_id)}
    # Through the include directory (-Iinclude): `<shapes/circle.hpp>` and `"shapes/shape.h"`
    # from tests/ name the headers under include/.
    dependencies = {(d.target_module, d.target_file_id) for d in indexes[CIRCLE_TEST].dependencies}
    assert dependencies == {
        (CIRCLE_HPP, fixture_version(CIRCLE_HPP, "cpp").file_id),
        (SHAPE_H, fixture_version(SHAPE_H, "cpp").file_id),
    }

    # Without its definition, the call names the declaration the caller includes; without
    # that header either, nothing.
    assert await sqlite_ast_store.retract_file(fixture_version(CIRCLE_CPP, "cpp", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(MAIN_CPP, "cpp").file_id)
    assert after is not None
    declared = _node_id(indexes[SHAPE_H], "shapes::total_area")
    assert _resolved(after, "calls")["shapes::total_area"] == declared
    assert await sqlite_ast_store.retract_file(fixture_version(SHAPE_H, "cpp", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(MAIN_CPP, "cpp").file_id)
    assert after is not None
    assert _resolved(after, "calls")["shapes::total_area"] == ""


ANNOTATED_HEADER = b"""#define FMT_CONSTEXPR constexpr
FMT_BEGIN_NAMESPACE
// FMT_API marks what the library exports.
class FMT_API format_error : public std::runtime_error {
 public:
  explicit format_error(const char *message) : std::runtime_error(message) {}
};

class text_style {
 public:
  FMT_CONSTEXPR_DECL
  text_style &operator|=(const text_style &rhs) FMT_NOEXCEPT {
    ems = merge(ems, rhs.ems);
    return *this;
  }

  friend FMT_CONSTEXPR
  text_style operator|(text_style lhs, const text_style &rhs) FMT_NOEXCEPT {
    return lhs |= rhs;
  }

  FMT_CONSTEXPR rgb get_foreground() const FMT_NOEXCEPT { return foreground_color; }

 private:
  int sizes_[MAX_STYLE_SIZE];
  emphasis ems;
};

template <typename Char>
FMT_CONSTEXPR text_style fg(rgb foreground) FMT_NOEXCEPT {
  return make_style(MAX_STYLE_SIZE + 1, foreground);
}
FMT_END_NAMESPACE
"""


def test_annotation_macros_do_not_hide_a_headers_definitions() -> None:
    """fmt's `FMT_CONSTEXPR`, `FMT_NOEXCEPT`, `FMT_API` and namespace macros: tree-sitter
    reads them as errors and loses the class's methods; the parser reads them as blanks."""
    analysis = extract("include/fmt/color.h", ANNOTATED_HEADER, "c")
    assert (analysis.language, analysis.parse_errors) == ("cpp", 0)
    symbols = symbols_by_name(analysis)
    assert {
        (name, s.kind, s.start_line, s.end_line)
        for name, s in symbols.items()
        if name != "include/fmt/color.h"
    } == {
        ("FMT_CONSTEXPR", "constant", 1, 1),  # `#define FMT_CONSTEXPR constexpr`
        ("format_error", "class", 4, 7),
        ("format_error::format_error", "constructor", 6, 6),
        ("text_style", "class", 9, 27),
        ("text_style::operator|=", "method", 12, 15),
        ("text_style::operator|", "method", 17, 20),
        ("text_style::get_foreground", "method", 22, 22),
        ("fg", "function", 29, 32),
    }
    # Names and signatures are read from the source as written; calls inside bodies too.
    assert symbols["text_style::get_foreground"].signature == "rgb get_foreground() const"
    calls = relation_triples(analysis, "calls")
    assert ("text_style::operator|=", "merge", "merge") in calls
    assert ("fg", "make_style", "make_style") in calls


def test_blanking_keeps_every_byte_offset_and_leaves_expressions_alone() -> None:
    blanked = blank_annotation_macros(ANNOTATED_HEADER)
    assert len(blanked) == len(ANNOTATED_HEADER)
    assert blanked.count(b"\n") == ANNOTATED_HEADER.count(b"\n")
    lines = blanked.decode().splitlines()
    assert lines[0] == "#define FMT_CONSTEXPR constexpr"  # a definition is no annotation
    assert lines[2] == "// FMT_API marks what the library exports."  # nor is a comment
    assert lines[1].strip() == lines[10].strip() == ""  # alone on their lines
    assert lines[3] == "class         format_error : public std::runtime_error {"
    assert lines[11] == "  text_style &operator|=(const text_style &rhs)              {"
    assert lines[29] == " " * 14 + "text_style fg(rgb foreground)" + " " * 14 + "{"
    # Constants in expressions and array sizes stay what they are.
    assert "int sizes_[MAX_STYLE_SIZE];" in lines[24]
    assert "make_style(MAX_STYLE_SIZE + 1, foreground)" in lines[30]
    # Nothing to blank: the same bytes.
    plain = b"int f(int x) { return x + LIMIT_MAX; }\n"
    assert blank_annotation_macros(plain) is plain


def test_a_blanked_source_that_recovers_fewer_definitions_is_not_used() -> None:
    """Error recovery can go either way: when the blanked source parses with errors into fewer
    definitions than the source as written, the written source's tree is kept."""
    compiled = compiled_language("cpp")
    source = b"int first() { return 1; }\nint second() { return 2; }\n"

    def unbraced(text: bytes) -> bytes:  # same length, the second body's braces gone
        return text.replace(b"{ return 2; }", b"  return 2;  ")

    harmful = replace(compiled, spec=replace(compiled.spec, parse_source=unbraced))
    parsed, _ = parse_tree(Parser(harmful.grammar), harmful, source)
    assert parsed == source
    # A blanked source that parses cleanly is used.
    helpful = replace(compiled, spec=replace(compiled.spec, parse_source=blank_annotation_macros))
    annotated = b"FMT_API int first() FMT_NOEXCEPT { return 1; }\n"
    parsed, root = parse_tree(Parser(helpful.grammar), helpful, annotated)
    assert parsed != annotated
    assert not root.has_error


READER_HEADER = b"""namespace nlohmann {
template<typename BasicJsonType>
class binary_reader
{
  public:
    FMT_CONSTEXPR binary_reader(input_t adapter) FMT_NOEXCEPT
      : ia(adapter) {}

    JSON_HEDLEY_NON_NULL(3)
    bool sax_parse(const input_format_t format,
                   json_sax_t* sax_)
    {
        JSON_ASSERT(sax_ != nullptr);
        return parse_cbor_internal(true);
    }

  JSON_PRIVATE_UNLESS_TESTED:
    JSON_HEDLEY_DEPRECATED_FOR(3.1.0, get_number(int))
    JSON_HEDLEY_WARN_UNUSED_RESULT
    static bool unexpect_eof(const input_format_t format, const char* context)
    {
        return true;
    }

    void reset()
    {
        current = 0;
    }
};
}
"""


def test_annotations_before_a_method_or_a_constructor_and_access_macros_hide_nothing() -> None:
    """nlohmann/json and fmt: a function-like annotation on its own line
    (`JSON_HEDLEY_NON_NULL(3)`), an access specifier spelled as a macro
    (`JSON_PRIVATE_UNLESS_TESTED:`) and an annotated constructor (`FMT_CONSTEXPR
    binary_reader(`) made tree-sitter lose the methods after them."""
    analysis = extract("include/nlohmann/detail/input/binary_reader.hpp", READER_HEADER, "cpp")
    assert analysis.parse_errors == 0
    symbols = symbols_by_name(analysis)
    assert {
        (name, s.kind, s.start_line, s.end_line)
        for name, s in symbols.items()
        if s.kind in {"constructor", "method"}
    } == {
        ("nlohmann::binary_reader::binary_reader", "constructor", 6, 7),
        ("nlohmann::binary_reader::sax_parse", "method", 10, 15),
        ("nlohmann::binary_reader::unexpect_eof", "method", 20, 23),
        ("nlohmann::binary_reader::reset", "method", 25, 28),
    }
    assert ("nlohmann::binary_reader::sax_parse", "parse_cbor_internal") in {
        (source, target) for source, target, _ in relation_triples(analysis, "calls")
    }


def test_a_function_like_macro_is_blanked_only_above_a_declaration() -> None:
    lines = blank_annotation_macros(READER_HEADER).decode().splitlines()
    assert lines[5].strip() == "binary_reader(input_t adapter)"  # a constructor's annotation
    assert lines[8].strip() == ""  # JSON_HEDLEY_NON_NULL(3): a declaration follows
    assert lines[12].strip() == "JSON_ASSERT(sax_ != nullptr);"  # a statement stays
    assert lines[16].strip() == ""  # the access macro and its colon
    assert lines[17].strip() == lines[18].strip() == ""  # two annotations above one declaration
    # A function-like macro above a statement is no annotation.
    counted = b"void f() {\n  COUNT_CALLS(f)\n  current = 0;\n}\n"
    assert blank_annotation_macros(counted) is counted
    # A call of a macro named like a statement keyword is no constructor.
    statement = b"void f() {\n  DEBUG_ONLY return(x);\n}\n"
    assert blank_annotation_macros(statement) is statement


STREAM_INL = b"""namespace simdjson {
/* Streams documents.
   Threads: see SIMDJSON_THREADS_ENABLED. */
#ifdef SIMDJSON_THREADS_ENABLED
inline void stage1_worker::finish() {
  has_work = false;
}
#else
inline void stage1_worker::finish() {}
#endif

simdjson_inline document_stream::document_stream(parser &p) noexcept
  : parser{&p},
    error{SUCCESS}
    #ifdef SIMDJSON_THREADS_ENABLED
    , use_thread(p.threaded)
    #endif
{
}

simdjson_inline document_stream::~document_stream() noexcept {
  worker.reset();
}

template <typename T>
#if defined(SIMDJSON_CPP_14)
constexpr
#endif
auto document_stream::get() const noexcept -> T {
  return T{};
}

inline simdjson::json operator "" _json(const char* s, std::size_t n) {
  return parse(s, n);
}
}
"""


def test_a_conditional_inside_a_declaration_and_a_lowercase_annotation_hide_nothing() -> None:
    """simdjson and nlohmann/json: an `#ifdef` inside a constructor's initializer list or
    between a template head and its function, and a lower-case annotation macro before an
    out-of-line constructor (`simdjson_inline document_stream::document_stream(`), made
    tree-sitter lose those definitions. A literal operator is named as C++ spells it."""
    analysis = extract("include/simdjson/document_stream-inl.h", STREAM_INL, "c")
    assert (analysis.language, analysis.parse_errors) == ("cpp", 0)
    symbols = symbols_by_name(analysis)
    assert {
        (name, s.kind, s.start_line, s.end_line)
        for name, s in symbols.items()
        if s.kind in {"constructor", "destructor", "method", "function"}
    } >= {
        ("simdjson::document_stream::document_stream", "constructor", 12, 19),
        ("simdjson::document_stream::get", "method", 25, 31),
        ('simdjson::operator""_json', "function", 33, 35),
    }
    assert any(name.endswith("~document_stream") for name in symbols)
    blanked = blank_annotation_macros(STREAM_INL).decode().splitlines()
    # A conditional around whole definitions, with an #else, is no part of a declaration.
    assert blanked[3] == "#ifdef SIMDJSON_THREADS_ENABLED"
    assert blanked[7] == "#else"
    assert blanked[14].strip() == blanked[16].strip() == ""  # inside the initializer list
    assert blanked[25].strip() == blanked[27].strip() == ""  # between template and function
    assert blanked[11].startswith(" " * len("simdjson_inline") + " document_stream::")
    assert blanked[32].startswith("inline simdjson::json")  # `inline` is a specifier
    expression = b"void f() {\n  new Foo::Foo(1);\n}\n"  # `new` is no annotation either
    assert blank_annotation_macros(expression) is expression


def test_what_only_looks_like_an_annotation_stays() -> None:
    """The review's cases: a macro that is the return type below a function-like one, a C
    return type spelled in capitals, a ternary's branch, an include guard after a one-line
    comment, a macro call without `;` before a conditional; and a conditional continued on
    the next line is blanked whole."""
    yaml = b"YAML_DECLARE(int)\nyaml_parser_initialize(yaml_parser_t *parser, int flags);\n"
    assert blank_c_annotation_macros(yaml) is yaml  # C: no constructors, the macro is a type
    kept = [
        b"int f(int c) {\n  return c ?\n    MODE_A :\n    MODE_B;\n}\n",
        b"/* generated */\n#ifndef GUARD_H\n#define GUARD_H\nint f(void);\n#endif\n",
        b'JMESSAGE(JMSG_NOMESSAGE, "Bogus")\n#if JPEG_LIB_VERSION >= 70\nJMESSAGE(A, "b")\n'
        b"#endif\n",
    ]
    for source in kept:
        assert blank_annotation_macros(source) is source
    c_header = b"OSSL_PARAM OSSL_PARAM_construct_int(const char *key, int *buf);\n"
    assert extract("include/openssl/params.h", c_header, "c").parse_errors == 0
    assert cpp_definition_name("operator< <>") == "operator< <>"  # a specialization, not <<
    continued = b"template <typename T>\n#if defined(A) && \\\n    defined(B)\nconstexpr\n#endif\n"
    continued += b"auto f() -> T { return T{}; }\n"
    analysis = extract("include/x.hpp", continued, "cpp")
    assert analysis.parse_errors == 0
    assert "f" in symbols_by_name(analysis)


def test_a_constructor_below_a_function_like_annotation_is_found() -> None:
    """nlohmann/json's exceptions: `JSON_HEDLEY_NON_NULL(3)` above `exception(int id_, const
    char* what_arg)` — in C++ a lone name and its parameters is a constructor's head."""
    source = (
        b"namespace detail {\nclass exception : public std::exception {\n  protected:\n"
        b"    JSON_HEDLEY_NON_NULL(3)\n    exception(int id_, const char* what_arg)"
        b" : id(id_), m(what_arg) {}\n};\n}\n"
    )
    analysis = extract("include/nlohmann/detail/exceptions.hpp", source, "cpp")
    assert analysis.parse_errors == 0
    assert symbols_by_name(analysis)["detail::exception::exception"].kind == "constructor"


def test_a_pragma_above_a_template_head_keeps_the_class_around_it() -> None:
    """fmt's base.h: `FMT_PRAGMA_CLANG(diagnostic ignored "...")` above `template <typename
    FormatContext>` and a method; read as written, the pragma took native_formatter's methods
    out of their struct."""
    source = (
        b"template <typename T, typename Char> struct native_formatter {\n"
        b" public:\n"
        b"  FMT_CONSTEXPR auto parse(parse_context<Char>& ctx) -> const Char* {\n"
        b"    return ctx.begin();\n  }\n"
        b'  FMT_PRAGMA_CLANG(diagnostic ignored "-Wundefined-inline")\n'
        b"  template <typename FormatContext>\n"
        b"  FMT_CONSTEXPR auto format(const T& val, FormatContext& ctx) const\n"
        b"      -> decltype(ctx.out());\n"
        b"  void reset() { }\n"
        b"};\n"
    )
    lines = blank_annotation_macros(source).decode().splitlines()
    assert lines[5].strip() == ""  # the pragma: a declaration follows its template head
    symbols = symbols_by_name(extract("include/fmt/base.h", source, "cpp"))
    assert symbols["native_formatter::parse"].kind == "method"
    assert symbols["native_formatter::reset"].kind == "method"


def test_out_of_line_conversion_operators_are_methods_of_their_class() -> None:
    """simdjson's `inline document::element_result<bool>::operator bool() const`: with the
    specifier in place tree-sitter read a function named `bool`, and without it the nested
    scope hid the operator from the definitions query."""
    source = (
        b"namespace simdjson {\n"
        b"inline document::element_result<bool>::operator bool() const noexcept(false) {\n"
        b"  return get();\n}\n"
        b"template<typename T>\n"
        b"really_inline result<T>::operator T() && noexcept(false) {\n"
        b"  return std::move(value);\n}\n"
        b"inline void *document::operator new(size_t size) { return alloc(size); }\n"
        b"}\n"
    )
    analysis = extract("include/simdjson/inline/document.h", source, "cpp")
    callables = {s.qualified_name: s for s in analysis.symbols if s.kind == "method"}
    assert callables["simdjson::document::element_result::operator bool"].start_line == 2
    assert "simdjson::result::operator T" in callables
    assert "bool" not in symbols_by_name(analysis)
    # `operator new` has a return type: the words before it stay.
    assert b"inline void *document::operator new" in blank_annotation_macros(source)


def test_overloads_are_symbols_of_their_own_and_conditional_definitions_fold() -> None:
    source = b"""namespace fmt {
void print(int value) { write(value); }
void print(const char* text) { write_text(text); }
#ifdef _WIN32
void flush() { win_flush(); }
#else
void flush() { posix_flush(); }
#endif
}
"""
    analysis = extract("src/print.cc", source, "cpp")
    spans = {
        s.qualified_name: (s.scope_name, s.start_line, s.end_line)
        for s in analysis.symbols
        if s.kind == "function"
    }
    assert spans == {
        "fmt::print": ("fmt::print", 2, 2),
        "fmt::print(const char* text)": ("fmt::print", 3, 3),
        "fmt::flush": ("fmt::flush", 5, 5),  # the #else branch is the same function
    }


def test_member_declarations_are_signatures_and_fold_into_their_definition_in_the_file() -> None:
    """In-class declarations and prototypes are signatures; each one defined further down the
    same file (other parameter names), either overload, folds into its definition; a friend is
    no member, and a declaration-looking statement in a body is no symbol."""
    source = b"""namespace json {
class parser {
 public:
  explicit parser(int depth);
  /// Parses one value.
  bool parse(const char *text) noexcept;
  bool parse(const char *text, size_t length) noexcept;
  virtual void reset() = 0;
  friend void swap(parser &a, parser &b);
};

bool parser::parse(const char *input) noexcept {
  std::string copy(input);
  return copy.empty();
}

bool parser::parse(const char *input, size_t size) noexcept { return size > 0; }

int version();
}
"""
    analysis = extract("include/json/parser.hpp", source, "cpp")
    kinds = {s.qualified_name: (s.kind, s.start_line) for s in analysis.symbols}
    assert kinds == {
        "include/json/parser.hpp": ("module", 1),
        "json": ("namespace", 1),
        "json::parser": ("class", 2),
        "json::parser::parser": ("signature", 4),
        "json::parser::reset": ("signature", 8),
        "json::parser::parse": ("method", 12),
        "json::parser::parse(const char *input, size_t size)": ("method", 17),
        "json::version": ("signature", 19),
    }
    assert [c.symbol_qualified_name for c in analysis.chunks if c.kind == "method"] == [
        "json::parser::parse",
        "json::parser::parse(const char *input, size_t size)",
    ]
