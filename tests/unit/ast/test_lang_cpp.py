"""C++ through the generic extractor and the real SQLite store: a `shapes` library (an
interface class in a `.h` header, which ingestion calls C; a derived class with a nested
struct and a class template in a `.hpp`; out-of-line constructor, destructor, methods and a
template member in a `.cpp`; a program in another directory calling into the namespace)."""

import pytest
from language_fixtures import (
    AST_FIXTURES,
    fixture_version,
    relation_triples,
    store_tree,
    symbols_by_name,
)

from locus.ast.adapters.store import AstStore, FileIndex
from locus.ast.domain import FileAnalysis, extract

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "cpp"
SHAPE_H = "include/shapes/shape.h"
CIRCLE_HPP = "include/shapes/circle.hpp"
CIRCLE_CPP = "src/circle.cpp"
MAIN_CPP = "src/main.cpp"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    """Each file under the language ingestion gives it (`.h` is C)."""
    return {
        path: extract(path, (ROOT / path).read_bytes(), "c" if path.endswith(".h") else "cpp")
        for path in (SHAPE_H, CIRCLE_HPP, CIRCLE_CPP, MAIN_CPP)
    }


def test_header_is_analysed_as_cpp_with_namespaces_as_containers(
    analyses: dict[str, FileAnalysis],
) -> None:
    analysis = analyses[SHAPE_H]
    assert (analysis.language, analysis.module_name, analysis.parse_errors) == ("cpp", SHAPE_H, 0)
    symbols = symbols_by_name(analysis)
    # The pure virtual `area` and the `total_area` prototype are declarations only.
    assert {(n, s.kind, s.start_line, s.end_line) for n, s in symbols.items()} == {
        (SHAPE_H, "module", 1, 20),
        ("shapes", "namespace", 6, 18),
        ("shapes::Shape", "class", 9, 14),
        ("shapes::Shape::name", "method", 13, 13),
    }
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
        (MAIN_CPP, "<iostream>", None),
        (MAIN_CPP, "../include/shapes/circle.hpp", CIRCLE_HPP),
    }
    assert [d.target_module for d in analyses[CIRCLE_HPP].dependencies] == [SHAPE_H]


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

    assert await sqlite_ast_store.retract_file(fixture_version(CIRCLE_CPP, "cpp", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(MAIN_CPP, "cpp").file_id)
    assert after is not None
    assert _resolved(after, "calls")["shapes::total_area"] == ""
