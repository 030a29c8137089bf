"""Python nested deeper than tree-sitter can follow: its Python scanner saves at most 512
indentation levels (two bytes each in a 1 KiB state buffer), so a file nested deeper parses
with its OUTER levels lost to error recovery. ``shallow_lines`` finds the spans outside the
lines nested past ``MAX_INDENT_LEVELS``; parsed alone (tree-sitter's included ranges keep byte
offsets and line numbers) the outer definitions survive and only the innermost are left out,
and the note says so. CPython itself refuses more than 100 levels."""

from __future__ import annotations

from dataclasses import dataclass

MAX_INDENT_LEVELS = 500
# The scanner keeps each indentation as a 16-bit column.
_MAX_INDENT_COLUMN = 0xFFFF
_TAB_COLUMNS = 8  # as tree-sitter-python's scanner counts a tab


@dataclass(frozen=True, slots=True)
class ByteSpan:
    """Whole lines ``[start_row, end_row)`` at bytes ``[start_byte, end_byte)``; ``end_column``
    is 0 unless the span ends inside the last line (a file without a final newline)."""

    start_byte: int
    end_byte: int
    start_row: int
    end_row: int
    end_column: int = 0


@dataclass(frozen=True, slots=True)
class ShallowLines:
    """The spans of a source that are nested shallowly enough to parse, and a sentence
    saying what was left out."""

    spans: tuple[ByteSpan, ...]
    note: str


def _indent_column(line: bytes) -> int | None:
    """The column a line's first token starts at; None for a blank line."""
    column = 0
    for byte in line:
        if byte == 0x20:
            column += 1
        elif byte == 0x09:
            column += _TAB_COLUMNS
        elif byte == 0x0C:  # form feed resets the indentation, as in CPython
            column = 0
        elif byte in (0x0D, 0x0A):
            return None
        else:
            return column
    return None


def shallow_lines(source: bytes, max_levels: int = MAX_INDENT_LEVELS) -> ShallowLines | None:
    """The spans of ``source`` outside the lines nested more than ``max_levels`` indentation
    levels (or past the 16-bit column the scanner keeps); None when no line is that deep.
    Levels are counted as Python's tokenizer counts INDENTs, approximately: continuation
    lines and multi-line strings count by their own indentation, which only matters past the
    limit."""
    lines = source.split(b"\n")
    stack = [0]
    deep: list[int] = []
    deepest = 0
    for number, line in enumerate(lines):
        column = _indent_column(line)
        if column is None:
            continue
        while stack[-1] > column:
            stack.pop()
        if column > stack[-1]:
            stack.append(column)
        level = len(stack) - 1
        deepest = max(deepest, level)
        if level > max_levels or column > _MAX_INDENT_COLUMN:
            deep.append(number)
    if not deep:
        return None
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line) + 1)
    spans: list[ByteSpan] = []
    row = 0
    for skipped in [*deep, len(lines)]:
        if skipped > row:
            if skipped < len(lines):
                spans.append(ByteSpan(line_starts[row], line_starts[skipped], row, skipped))
            else:  # to the end of the file, which may lack a final newline
                last = len(lines) - 1
                spans.append(ByteSpan(line_starts[row], len(source), row, last, len(lines[last])))
        row = skipped + 1
    note = (
        f"{len(deep):,} line(s) nested deeper than {max_levels} indentation levels "
        f"(deepest {deepest:,}; the first at line {deep[0] + 1:,}) are not indexed: the "
        "parser cannot follow them"
    )
    return ShallowLines(tuple(spans), note)
