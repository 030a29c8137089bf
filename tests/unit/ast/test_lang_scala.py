"""Scala through the generic extractor and the real SQLite store: the `com.acme` fixture (a
trait, case classes, a companion object, selector imports with a rename, a caller in another
package)."""

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
from locus.ast.domain import FileAnalysis, extract
from locus.ast.domain.language_spec import SourceRoot

pytestmark = pytest.mark.unit

ROOT = AST_FIXTURES / "scala"
BASE = "src/main/scala/com/acme"
SHAPE = f"{BASE}/geo/Shape.scala"
CANVAS = f"{BASE}/geo/Canvas.scala"
RENDER = f"{BASE}/app/Render.scala"


@pytest.fixture(scope="module")
def analyses() -> dict[str, FileAnalysis]:
    return analyse_tree(ROOT, "scala", source_root=SourceRoot("src/main/scala", ""))


def test_symbols_are_qualified_by_package(analyses: dict[str, FileAnalysis]) -> None:
    analysis = analyses[SHAPE]
    assert (analysis.module_name, analysis.parse_errors) == ("com/acme/geo/Shape.scala", 0)
    symbols = symbols_by_name(analysis)
    expected = {
        "com.acme.geo.Shape": ("trait", "Shape", 4, 8),
        "com.acme.geo.Shape.describe": ("method", "Shape.describe", 7, 7),
        "com.acme.geo.Circle": ("class", "Circle", 11, 17),
        "com.acme.geo.Circle.grow": ("method", "Circle.grow", 16, 16),
        # The companion object's members are qualified under the class they accompany.
        "com.acme.geo.Circle.of": ("method", "Circle.of", 20, 20),
        "com.acme.geo.Square": ("class", "Square", 25, 27),
    }
    for qualified_name, (kind, scope_name, start, end) in expected.items():
        symbol = symbols[qualified_name]
        assert (symbol.kind, symbol.scope_name, symbol.start_line, symbol.end_line) == (
            kind,
            scope_name,
            start,
            end,
        ), qualified_name
    assert symbols["com.acme.geo.Circle.of"].parent_qualified_name == "com.acme.geo.Circle"
    assert symbols["com.acme.geo.Shape.area"].kind == "signature"  # abstract: no body
    assert [s.kind for s in analysis.symbols].count("class") == 2  # the object is no extra symbol


def test_scaladoc_and_signatures(analyses: dict[str, FileAnalysis]) -> None:
    symbols = symbols_by_name(analyses[SHAPE])
    circle = symbols["com.acme.geo.Circle"]
    assert circle.docstring == "A circle around the origin."
    assert (
        circle.signature == "case class Circle(radius: Double) extends Shape with Ordered[Circle]"
    )
    assert symbols["com.acme.geo.Circle.area"].signature == "def area: Double"
    assert symbols["com.acme.geo.Shape"].docstring == "Anything with an area."


def test_relations(analyses: dict[str, FileAnalysis]) -> None:
    shape = analyses[SHAPE]
    assert relation_triples(shape, "inherits") == {
        ("com.acme.geo.Circle", "Shape", "com.acme.geo.Shape"),
        ("com.acme.geo.Circle", "Ordered", "com.acme.geo.Ordered"),
        ("com.acme.geo.Square", "Shape", "com.acme.geo.Shape"),
    }
    calls = relation_triples(shape, "calls")
    assert ("com.acme.geo.Circle.grow", "Circle.of", "com.acme.geo.Circle.of") in calls
    assert ("com.acme.geo.Circle.unit", "of", "com.acme.geo.Circle.of") in calls
    render = analyses[RENDER]
    assert relation_triples(render, "imports") == {
        ("com/acme/app/Render.scala", "com.acme.geo.Canvas", "com.acme.geo.Canvas"),
        ("com/acme/app/Render.scala", "com.acme.geo.Circle", "com.acme.geo.Circle"),
        ("com/acme/app/Render.scala", "com.acme.geo.Square", "com.acme.geo.Square"),
    }
    render_calls = relation_triples(render, "calls")
    main = "com.acme.app.Render.main"
    assert (main, "Canvas", "com.acme.geo.Canvas") in render_calls  # new Canvas()
    assert (main, "Disc.of", "com.acme.geo.Circle.of") in render_calls  # Circle => Disc
    assert (main, "Square", "com.acme.geo.Square") in render_calls
    assert (main, "summary", "com.acme.app.Render.summary") in render_calls


def test_chunks_are_symbol_aligned(analyses: dict[str, FileAnalysis]) -> None:
    chunks = analyses[CANVAS].chunks
    add = next(c for c in chunks if c.symbol_qualified_name == "com.acme.geo.Canvas.add")
    source = (ROOT / CANVAS).read_text().splitlines()
    assert (add.kind, add.start_line, add.end_line) == ("method", 8, 11)
    assert add.text == "\n".join(source[7:11])
    outline = next(c for c in chunks if c.kind == "class_header")
    assert outline.text.splitlines()[0] == "class Canvas {"
    assert "  def add(shape: Shape): Canvas = ..." in outline.text
    assert "shapes += shape" not in outline.text


def _resolved(index: FileIndex, kind: str) -> dict[str, str]:
    return {
        r.relation.target_qualified_name: r.target_node_id
        for r in index.relations
        if r.relation.kind == kind and r.relation.target_qualified_name
    }


async def test_store_resolves_across_files_and_forgets_a_retracted_file(
    sqlite_ast_store: AstStore, analyses: dict[str, FileAnalysis]
) -> None:
    indexes = await store_tree(sqlite_ast_store, analyses, "scala")
    render = indexes[RENDER]
    shape_ids = {s.qualified_name: s.node_id for s in indexes[SHAPE].symbols}
    calls = _resolved(render, "calls")
    assert calls["com.acme.geo.Circle.of"] == shape_ids["com.acme.geo.Circle.of"]
    assert calls["com.acme.geo.Canvas"] != ""
    targets = {d.target_file_id for d in render.dependencies}
    assert {fixture_version(SHAPE, "scala").file_id, fixture_version(CANVAS, "scala").file_id} <= (
        targets
    )

    assert await sqlite_ast_store.retract_file(fixture_version(SHAPE, "scala", seq=2))
    after = await sqlite_ast_store.file_index(fixture_version(RENDER, "scala").file_id)
    assert after is not None
    resolved = _resolved(after, "calls")
    assert resolved["com.acme.geo.Circle.of"] == ""
    assert resolved["com.acme.geo.Canvas"] != ""


def test_a_companion_written_first_leaves_the_name_to_its_class_operators_and_package_objects() -> (
    None
):
    # os-lib writes `object Path` above `class Path`; its operators are methods; a package
    # object's members are the package's (`os.pwd`).
    path = b"""package os

/** Factories. */
object Path {
  def apply(s: String): Path = new Path(s)
}

/** An absolute path on the filesystem. */
class Path(val s: String) {
  def ++(other: Path): Path = this
}

trait Sized {
  def +(n: Int): Sized
}
"""
    symbols = symbols_by_name(extract("os/src/Path.scala", path, "scala"))
    assert (symbols["os.Path"].kind, symbols["os.Path"].start_line) == ("class", 9)
    assert symbols["os.Path"].docstring == "An absolute path on the filesystem."
    assert symbols["os.Path.apply"].parent_qualified_name == "os.Path"
    assert (symbols["os.Path.++"].kind, symbols["os.Path.++"].start_line) == ("method", 10)
    assert symbols["os.Sized.+"].kind == "signature"
    package = b'package object os {\n  def pwd: String = "/"\n}\n'
    members = symbols_by_name(extract("os/src/package.scala", package, "scala"))
    assert (members["os"].kind, members["os.pwd"].kind) == ("namespace", "function")


def test_a_call_on_a_typed_parameter_or_val_is_a_method_of_its_type() -> None:
    # fansi's `class Str(errorMode: ErrorMode)` calling `errorMode.handle(...)`: resolved to the
    # trait's method, so impact reaches the callers of the implementations.
    source = b"""package fansi

trait ErrorMode {
  def handle(s: String): String
}

class Str(errorMode: ErrorMode) {
  def apply(raw: String, mode: ErrorMode): String = {
    val parser: Parser = new Parser()
    parser.parse(raw)
    errorMode.handle(raw)
    mode.handle(raw)
  }
}

class Parser {
  def parse(s: String): Int = 0
}
"""
    analysis = extract("fansi/src/fansi/Fansi.scala", source, "scala")
    calls = {(written, target) for _, written, target in relation_triples(analysis, "calls")}
    assert ("errorMode.handle", "fansi.ErrorMode.handle") in calls  # a class parameter
    assert ("mode.handle", "fansi.ErrorMode.handle") in calls  # a parameter
    assert ("parser.parse", "fansi.Parser.parse") in calls  # val x: T
