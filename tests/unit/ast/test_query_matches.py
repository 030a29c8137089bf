"""One pass of a language's combined query gives each query exactly what it gives alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Parser, QueryCursor

from locus.ast.domain import supported_languages
from locus.ast.domain.languages import QueryMatches, compiled_language

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).parent / "fixtures"
EXTENSIONS = {
    "python": ".py",
    "java": ".java",
    "kotlin": ".kt",
    "scala": ".scala",
    "csharp": ".cs",
    "go": ".go",
    "javascript": ".js",
    "typescript": ".ts",
    "tsx": ".tsx",
    "c": ".c",
    "cpp": ".cpp",
    "rust": ".rs",
    "php": ".php",
    "ruby": ".rb",
}
QUERIES = ("package", "definitions", "docstrings", "imports", "inheritance", "calls")


def shape(captures: dict) -> list[tuple[str, list[int]]]:
    return sorted((name, [node.id for node in nodes]) for name, nodes in captures.items())


@pytest.mark.parametrize("language", sorted(supported_languages()))
def test_each_query_gets_the_matches_of_its_own_run(language: str) -> None:
    compiled = compiled_language(language)
    files = sorted(FIXTURES.rglob(f"*{EXTENSIONS[language]}"))
    assert files, f"no {language} fixture"
    parser = Parser(compiled.grammar)
    checked = 0
    for path in files:
        root = parser.parse(path.read_bytes()).root_node
        matched = QueryMatches(compiled, root)
        for name in QUERIES:
            query = getattr(compiled, name)
            alone = [] if query is None else QueryCursor(query).matches(root)
            assert [shape(m) for m in matched.matches(name)] == [shape(m) for _, m in alone]
            checked += len(alone)
    assert checked > 0
