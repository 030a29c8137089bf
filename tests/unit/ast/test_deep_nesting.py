"""Python nested deeper than tree-sitter's scanner can follow (issue 12: "more than 511 nested
definitions: the outer levels are silently dropped"): the outer definitions are kept, the lines
past the limit are left out and the analysis says so."""

import pytest

from locus.ast.domain import extract
from locus.ast.domain.indentation_limit import MAX_INDENT_LEVELS, ByteSpan, shallow_lines

pytestmark = pytest.mark.unit


def nested_functions(depth: int, indent: str = "    ") -> str:
    lines = [f"{indent * level}def f{level}():" for level in range(depth)]
    return "\n".join([*lines, f"{indent * depth}return {depth}"]) + "\n"


def test_two_thousand_nested_definitions_keep_their_outer_levels() -> None:
    source = nested_functions(2000) + "\ndef after():\n    return f0()\n"
    analysis = extract("pkg/deep.py", source.encode(), "python")

    symbols = {symbol.name: symbol for symbol in analysis.symbols}
    # The outer levels (dropped before the fix: f0 … f1488 were lost) are all there.
    assert [f"f{level}" for level in range(MAX_INDENT_LEVELS + 1)] == [
        s.name for s in analysis.symbols if s.name.startswith("f")
    ]
    assert symbols["f0"].qualified_name == "pkg.deep.f0"
    assert symbols["f0"].parent_qualified_name == "pkg.deep"
    assert (symbols["f0"].start_line, symbols["f1"].start_line) == (1, 2)
    assert symbols["f1"].qualified_name == "pkg.deep.f0.f1"
    # The definition after the deep lines is parsed at its true lines.
    assert symbols["after"].start_line == 2003
    assert symbols["after"].end_line == 2004
    assert symbols["after"].parent_qualified_name == "pkg.deep"
    assert analysis.parse_errors == 0
    assert analysis.omitted is not None
    assert f"deeper than {MAX_INDENT_LEVELS} indentation levels" in analysis.omitted
    assert "deepest 2,000" in analysis.omitted
    # Chunks cover the outer code and nothing past the limit.
    chunk_text = "".join(chunk.text for chunk in analysis.chunks)
    assert "def f0():" in chunk_text
    assert "def after():" in chunk_text
    assert "def f1999():" not in chunk_text


def test_nested_ifs_past_the_limit_keep_the_enclosing_function() -> None:
    depth = 800
    body = "\n".join(f"{' ' * (level + 1)}if x{level}:" for level in range(depth))
    source = f"def outer(x):\n{body}\n{' ' * (depth + 1)}pass\n"
    analysis = extract("ifs.py", source.encode(), "python")
    outer = next(symbol for symbol in analysis.symbols if symbol.name == "outer")
    assert outer.start_line == 1
    assert analysis.omitted is not None


def test_nesting_within_the_limit_is_untouched() -> None:
    source = nested_functions(300, indent=" ").encode()
    analysis = extract("ok.py", source, "python")
    assert len([s for s in analysis.symbols if s.kind == "function"]) == 300
    assert analysis.omitted is None
    assert analysis.parse_errors == 0


def test_shallow_lines_spans_keep_byte_offsets_and_rows() -> None:
    source = b"a:\n  b:\n    c\n  d\ne"  # no final newline
    found = shallow_lines(source, max_levels=1)
    assert found is not None
    assert found.spans == (ByteSpan(0, 8, 0, 2), ByteSpan(14, 19, 3, 4, 1))
    assert source[14:19] == b"  d\ne"
    assert shallow_lines(source, max_levels=2) is None


def test_blank_lines_and_tabs_are_counted_as_the_scanner_counts_them() -> None:
    source = b"a:\n\n\tb:\n        \n\t\tc\n"
    found = shallow_lines(source, max_levels=1)
    assert found is not None
    assert [(span.start_row, span.end_row) for span in found.spans] == [(0, 4), (5, 5)]
