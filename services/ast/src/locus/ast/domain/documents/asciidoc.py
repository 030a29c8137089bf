"""AsciiDoc into an outline by a line scanner: ``= Title`` (or Markdown-style ``#``) headings,
the count of markers being the level; delimited blocks (``----`` listing, ``....`` literal,
``++++`` passthrough, ```` ``` ```` fences; ``====``, ``****``, ``____``, ``////`` compound
and comment blocks) are each one block, never read for headings, and the listing, literal,
passthrough and fenced ones are code. A lone ``[source,…]`` line joins the block it opens."""

from __future__ import annotations

import re

from locus.ast.domain.documents.outline import (
    Block,
    DocumentOutline,
    Heading,
    document_lines,
    line_block,
)

_HEADING = re.compile(r"^(={1,6}|#{1,6})\s+(\S.*?)\s*=*\s*$")
_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|\+{4,}|/{4,}|={4,}|\*{4,}|_{4,}|```.*)\s*$")
_CODE_DELIMITERS = frozenset("-.+`")
_ATTRIBUTES = re.compile(r"^\[[^\]]*\]\s*$")


def asciidoc_outline(text: str) -> DocumentOutline:
    lines = document_lines(text)
    items: list[Heading | Block] = []
    paragraph_start = 0

    def close_paragraph(end: int) -> None:
        nonlocal paragraph_start
        if paragraph_start and (block := line_block(lines, paragraph_start, end)) is not None:
            items.append(block)
        paragraph_start = 0

    number = 1
    while number <= len(lines):
        line = lines[number - 1]
        if delimiter := _DELIMITER.match(line):
            opener = number
            if paragraph_start == number - 1 and _ATTRIBUTES.match(lines[number - 2]):
                opener, paragraph_start = number - 1, 0
            close_paragraph(number - 1)
            last = _closing_line(lines, number, delimiter.group(1))
            code = delimiter.group(1)[0] in _CODE_DELIMITERS
            if (block := line_block(lines, opener, last, code=code)) is not None:
                items.append(block)
            number = last + 1
            continue
        if heading := _HEADING.match(line):
            close_paragraph(number - 1)
            items.append(Heading(len(heading.group(1)), heading.group(2), number, number))
        elif not line.strip():
            close_paragraph(number - 1)
        elif not paragraph_start:
            paragraph_start = number
        number += 1
    close_paragraph(len(lines))
    return DocumentOutline(tuple(items), len(lines), lines)


def _closing_line(lines: tuple[str, ...], opener: int, delimiter: str) -> int:
    """The line that closes the block opened at ``opener``; the last line when none does."""
    fence = delimiter.startswith("```")
    for number in range(opener + 1, len(lines) + 1):
        line = lines[number - 1].rstrip()
        if (fence and line.startswith("```")) or (not fence and line == delimiter):
            return number
    return len(lines)
