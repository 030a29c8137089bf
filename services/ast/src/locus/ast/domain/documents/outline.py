"""What a document parser reads out of one document: its headings and its blocks (paragraphs,
lists, tables, code blocks) in document order, each with the source lines it spans."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    """A section title. Only the order of levels matters: a heading closes every open section
    of its level or deeper. ``end_line`` is past ``start_line`` for underlined titles."""

    level: int
    title: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Block:
    """A unit of a section's text that a chunk boundary never cuts (unless it is larger than
    the chunking limits allow): a paragraph, a list, a table, or a code block (``code``)."""

    start_line: int
    end_line: int
    text: str
    code: bool = False


@dataclass(frozen=True, slots=True)
class DocumentOutline:
    """A parsed document. ``source_lines`` is set for line-based formats (Markdown,
    reStructuredText, AsciiDoc): a chunk's text is then exactly its source lines. HTML leaves
    it None: a chunk's text is its blocks' reduced text (tags dropped, entities decoded), and
    its line range the source lines that text came from."""

    items: tuple[Heading | Block, ...]
    line_count: int
    source_lines: tuple[str, ...] | None
    title: str = ""  # the HTML <title>, when there is one


def document_lines(text: str) -> tuple[str, ...]:
    """Lines as the rest of ast counts them (on ``\\n`` only, no trailing empty line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return tuple(line.removesuffix("\r") for line in lines)


def line_block(lines: tuple[str, ...], start: int, end: int, *, code: bool = False) -> Block | None:
    """The block of source lines ``start..end`` (1-based, inclusive) without its trailing blank
    lines; None when nothing but blank lines is left."""
    while end >= start and not lines[end - 1].strip():
        end -= 1
    while start <= end and not lines[start - 1].strip():
        start += 1
    if end < start:
        return None
    return Block(start, end, "\n".join(lines[start - 1 : end]), code)
