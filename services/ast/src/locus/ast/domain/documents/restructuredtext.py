"""reStructuredText into an outline by a heading scanner (docutils would be a heavy dependency
for titles and blocks alone): a title is a text line underlined (optionally also overlined) by
one repeated punctuation character at least as long as the title; its level is the order in
which that adornment style first appears, as docutils decides. A line ending in ``::`` (a
paragraph or a directive such as ``.. code-block:: python``) opens a literal block: every
following line indented deeper, blank lines included, is one code block."""

from __future__ import annotations

import re

from locus.ast.domain.documents.outline import (
    Block,
    DocumentOutline,
    Heading,
    document_lines,
    line_block,
)

# One punctuation character repeated (at least twice) to the end of the line.
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")


def restructuredtext_outline(text: str) -> DocumentOutline:
    lines = document_lines(text)
    items: list[Heading | Block] = []
    styles: list[tuple[str, bool]] = []
    paragraph_start = 0  # first line of the paragraph being read, 0 when none

    def close_paragraph(end: int) -> None:
        nonlocal paragraph_start
        if paragraph_start and (block := line_block(lines, paragraph_start, end)) is not None:
            items.append(block)
        paragraph_start = 0

    def level_of(style: tuple[str, bool]) -> int:
        if style not in styles:
            styles.append(style)
        return styles.index(style) + 1

    number = 1
    while number <= len(lines):
        line = lines[number - 1]
        heading = _heading_at(lines, number, after_blank=not paragraph_start)
        if heading is not None:
            close_paragraph(number - 1)
            title, style, last = heading
            items.append(Heading(level_of(style), title, number, last))
            number = last + 1
            continue
        if not line.strip():
            close_paragraph(number - 1)
            number += 1
            continue
        if not paragraph_start:
            paragraph_start = number
        if line.rstrip().endswith("::"):
            close_paragraph(number)
            number = _literal_block(lines, number, items)
            continue
        number += 1
    close_paragraph(len(lines))
    return DocumentOutline(tuple(items), len(lines), lines)


def _heading_at(
    lines: tuple[str, ...], number: int, *, after_blank: bool
) -> tuple[str, tuple[str, bool], int] | None:
    """(title, adornment style, last line) of a title starting at ``number``, or None."""
    line = lines[number - 1]
    over = _ADORNMENT.match(line)
    if over and number + 2 <= len(lines):
        title, under = lines[number].strip(), lines[number + 1].rstrip()
        if title and under == line.rstrip() and len(under) >= len(title):
            return title, (over.group(1), True), number + 2
    if over or not after_blank or not line.strip() or line[0].isspace():
        return None
    if number + 1 > len(lines):
        return None
    under_match = _ADORNMENT.match(lines[number])
    title = line.strip()
    if under_match and len(lines[number].rstrip()) >= len(title):
        return title, (under_match.group(1), False), number + 1
    return None


def _literal_block(lines: tuple[str, ...], opener: int, items: list[Heading | Block]) -> int:
    """Add the literal block the line ``opener`` (ending in ``::``) introduces, if any; the
    line to read next."""
    indent = len(lines[opener - 1]) - len(lines[opener - 1].lstrip())
    number = opener + 1
    last = opener
    while number <= len(lines):
        line = lines[number - 1]
        if line.strip():
            if len(line) - len(line.lstrip()) <= indent:
                break
            last = number
        number += 1
    if last > opener and (block := line_block(lines, opener + 1, last, code=True)) is not None:
        items.append(block)
    return last + 1
