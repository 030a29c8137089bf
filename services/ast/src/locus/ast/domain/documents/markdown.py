"""Markdown into an outline with markdown-it-py (CommonMark and GFM tables): ATX and setext
headings, and each top-level block (paragraph, list, quote, table, fenced or indented code,
HTML block) with its source lines. YAML front matter is one code block, never a heading."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from locus.ast.domain.documents.outline import (
    Block,
    DocumentOutline,
    Heading,
    document_lines,
    line_block,
)

_PARSER = MarkdownIt("commonmark").enable("table")
_FRONT_MATTER_FENCE = re.compile(r"^(---|\+\+\+)\s*$")
_INLINE_TEXT_TYPES = frozenset({"text", "code_inline", "html_inline"})


def markdown_outline(text: str) -> DocumentOutline:
    lines = document_lines(text)
    items: list[Heading | Block] = []
    front_matter_end = _front_matter_end(lines)
    if front_matter_end:
        if (block := line_block(lines, 1, front_matter_end, code=True)) is not None:
            items.append(block)
        # Blank lines in its place keep every later token's line numbers right.
        text = "\n" * front_matter_end + "\n".join(lines[front_matter_end:])
    tokens = _PARSER.parse(text)
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        start, end = token.map[0] + 1, token.map[1]  # map: 0-based, end exclusive
        if token.type == "heading_open":
            title = _inline_text(tokens[index + 1]) if index + 1 < len(tokens) else ""
            if title:
                items.append(Heading(int(token.tag[1:]), title, start, end))
            continue
        block = line_block(lines, start, end, code=token.type in ("fence", "code_block"))
        if block is not None:
            items.append(block)
    return DocumentOutline(tuple(items), len(lines), lines)


def _front_matter_end(lines: tuple[str, ...]) -> int:
    """The line that closes a front matter block opening the document; 0 when it has none."""
    if not lines or not _FRONT_MATTER_FENCE.match(lines[0]):
        return 0
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == lines[0].strip():
            return number
    return 0


def _inline_text(token: Token) -> str:
    """A heading's text as read: markup dropped (`**x**` → x), code spans kept as their code."""
    parts = [
        child.content if child.type in _INLINE_TEXT_TYPES else " "
        for child in token.children or ()
        if child.type in _INLINE_TEXT_TYPES or child.type in ("softbreak", "hardbreak")
    ]
    return " ".join("".join(parts).split()) if parts else " ".join(token.content.split())
