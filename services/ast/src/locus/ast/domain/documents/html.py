"""HTML reduced to text that keeps its structure: ``h1`` to ``h6`` are headings, paragraphs,
list items (``- `` per level), table rows (cells joined by `` | ``) and other block elements
are blocks, ``pre`` is a code block kept verbatim; script, style, nav, head (but its title),
template, noscript, svg and iframe content is dropped and character references are decoded.

The standard library's ``html.parser`` suffices here and is the one parser at hand that reports
the source line of every token (``getpos``), which citations need: it is the tolerant tokenizer
browsers' rules build on (unclosed ``p``/``li`` are closed by the next block element here)."""

from __future__ import annotations

from html.parser import HTMLParser

from locus.ast.domain.documents.outline import Block, DocumentOutline, Heading, document_lines

_DROPPED = frozenset(
    {"script", "style", "nav", "head", "template", "noscript", "svg", "iframe", "canvas"}
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote",
        "ul", "ol", "dl", "dt", "dd", "li", "table", "thead", "tbody", "tr", "figure",
        "figcaption", "details", "summary", "address", "form", "fieldset", "hr", "br", "body",
    }
)  # fmt: skip
_LISTS = frozenset({"ul", "ol"})
_CELLS = frozenset({"td", "th"})


def html_outline(text: str) -> DocumentOutline:
    try:
        reader = _read(text)
    except AssertionError:
        # html.parser gives up on a marked section it cannot name (`<![` before terminal
        # escapes in a page of highlighted output): such an opener is read as text instead.
        reader = _read(text.replace("<![", "&lt;!["))
    return DocumentOutline(
        tuple(reader.items),
        len(document_lines(text)),
        None,
        " ".join(reader.title.split()),
    )


def _read(text: str) -> _HtmlReader:
    reader = _HtmlReader()
    reader.feed(text)
    reader.close()
    reader.flush()
    return reader


class _HtmlReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[Heading | Block] = []
        self.title = ""
        self._dropped = 0  # depth inside dropped elements
        self._in_title = False
        self._heading: int = 0  # the level of the heading being read, 0 outside one
        self._pre = 0  # depth inside pre elements
        self._list_depth = 0
        self._prefix = ""
        self._parts: list[str] = []
        self._first_line = 0
        self._last_line = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _DROPPED:
            self._dropped += 1
            return
        if self._dropped:
            return
        if tag in _HEADINGS:
            self.flush()
            self._heading = _HEADINGS[tag]
        elif tag == "pre":
            self.flush()
            self._pre += 1
        elif tag in _BLOCKS and not self._pre:
            self.flush()
            if tag in _LISTS:
                self._list_depth += 1
            elif tag == "li":
                self._prefix = "  " * max(self._list_depth - 1, 0) + "- "
        elif tag in _CELLS and self._parts:
            self._parts.append(" | ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._dropped and tag in ("br", "hr") and not self._pre:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _DROPPED:
            self._dropped = max(self._dropped - 1, 0)
            return
        if self._dropped:
            return
        if tag in _HEADINGS and self._heading:
            self.flush()
        elif tag == "pre" and self._pre:
            self.flush()
            self._pre -= 1
        elif tag in _BLOCKS and not self._pre:
            self.flush()
            if tag in _LISTS:
                self._list_depth = max(self._list_depth - 1, 0)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._dropped:
            return
        if not self._pre and not data.strip():
            if self._parts:
                self._parts.append(" ")
            return
        line = self.getpos()[0]
        leading = data[: len(data) - len(data.lstrip())] if not self._pre else ""
        first = line + leading.count("\n")
        last = line + data[: len(data.rstrip())].count("\n")
        if not self._parts:
            self._first_line = first
        self._last_line = max(last, self._first_line)
        self._parts.append(data)  # whitespace is collapsed when the block ends

    def flush(self) -> None:
        """End the block (or heading) being read, if it holds any text."""
        raw = "".join(self._parts)
        self._parts = []
        heading, self._heading = self._heading, 0
        prefix, self._prefix = self._prefix, ""
        if self._pre:
            code = raw.removeprefix("\n").rstrip()
            if code.strip():
                self.items.append(Block(self._first_line, self._last_line, code, code=True))
            return
        text = " ".join(raw.split()).replace(" | | ", " | ")
        if not text:
            return
        if heading:
            self.items.append(Heading(heading, text, self._first_line, self._last_line))
        else:
            self.items.append(Block(self._first_line, self._last_line, prefix + text))
