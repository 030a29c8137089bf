"""Knowledge documents into sections: heading paths, code blocks kept whole, HTML reduced to
text with its structure, through ``extract`` as the parser processes call it."""

from __future__ import annotations

import pytest

from locus.ast.domain import ChunkingPolicy, FileAnalysis, UndecodableSource, extract, extracts
from locus.ast.domain.documents import document_format

pytestmark = pytest.mark.unit

MANUAL = """\
---
title: Manual
---
Locus answers questions about code.

# Manual

Welcome to the manual.

## Installation

Install the wheel.

```bash
pip install locus

# a comment, not a heading
locus up
```

### Upgrading

Stop the service, then run `locus upgrade` to migrate the stores.

## Installation

A second section of the same name.
"""


def analyse(path: str, text: str, language: str, policy: ChunkingPolicy | None = None):
    return extract(path, text.encode("utf-8"), language, policy or ChunkingPolicy())


def sections(analysis: FileAnalysis) -> list[tuple[str, str, int, int]]:
    return [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in analysis.symbols]


def chunk_owners(analysis: FileAnalysis) -> list[tuple[str | None, int, int]]:
    return [(c.symbol_qualified_name, c.start_line, c.end_line) for c in analysis.chunks]


def test_markdown_headings_become_sections_named_by_their_heading_path() -> None:
    analysis = analyse("docs/manual.md", MANUAL, "markdown")

    assert sections(analysis) == [
        ("docs/manual.md", "section", 1, 27),
        ("docs/manual.md > Manual", "section", 6, 27),
        ("docs/manual.md > Manual > Installation", "section", 10, 23),
        ("docs/manual.md > Manual > Installation > Upgrading", "section", 21, 23),
        ("docs/manual.md > Manual > Installation (2)", "section", 25, 27),
    ]
    upgrading = analysis.symbols[3]
    assert (upgrading.name, upgrading.scope_name) == (
        "Upgrading",
        "Manual > Installation > Upgrading",
    )
    assert upgrading.parent_qualified_name == "docs/manual.md > Manual > Installation"
    assert upgrading.signature == "### Upgrading"
    assert (
        upgrading.docstring == "Stop the service, then run `locus upgrade` to migrate the stores."
    )
    assert [(r.kind, r.source_qualified_name, r.target_qualified_name) for r in analysis.relations][
        :3
    ] == [
        ("contains", "docs/manual.md", "docs/manual.md > Manual"),
        ("contains", "docs/manual.md > Manual", "docs/manual.md > Manual > Installation"),
        (
            "contains",
            "docs/manual.md > Manual > Installation",
            "docs/manual.md > Manual > Installation > Upgrading",
        ),
    ]
    # Each section's own text, front matter and the preamble in the file's root section; the
    # fenced block's "# a comment" is code, not a heading.
    assert chunk_owners(analysis) == [
        ("docs/manual.md", 1, 4),
        ("docs/manual.md > Manual", 6, 8),
        ("docs/manual.md > Manual > Installation", 10, 19),
        ("docs/manual.md > Manual > Installation > Upgrading", 21, 23),
        ("docs/manual.md > Manual > Installation (2)", 25, 27),
    ]
    assert {c.kind for c in analysis.chunks} == {"section"}
    installation = analysis.chunks[2]
    assert installation.text == "\n".join(MANUAL.splitlines()[9:19])
    assert [c.ordinal for c in analysis.chunks] == list(range(5))


def test_a_long_section_is_split_between_blocks_and_never_inside_a_code_block() -> None:
    paragraphs = "\n\n".join(f"Paragraph {n} about retries and backoff." for n in range(6))
    code = "\n".join(f"    step_{n}()" for n in range(12))
    text = f"# Guide\n\n{paragraphs}\n\n```python\ndef run():\n{code}\n```\n\nClosing words.\n"
    policy = ChunkingPolicy(max_lines=10, max_chars=10_000, overlap_lines=0)

    analysis = analyse("guide.md", text, "markdown", policy)

    lines = text.splitlines()
    fence_start = lines.index("```python") + 1
    fence_end = len(lines) - 2  # the closing fence, then a blank line and the closing words
    ranges = [(c.start_line, c.end_line) for c in analysis.chunks]
    assert (fence_start, fence_end) in ranges  # 15 lines: over the limit, under the cap
    for start, end in ranges:
        assert not start < fence_start <= end or (start, end) == (fence_start, fence_end)
        if (start, end) != (fence_start, fence_end):
            assert end - start + 1 <= 10
            assert lines[start - 1].strip()  # a chunk begins and ends at a block
            assert lines[end - 1].strip()
    assert {c.symbol_qualified_name for c in analysis.chunks} == {"guide.md > Guide"}


def test_a_code_block_over_the_cap_is_cut_into_line_windows() -> None:
    body = "\n".join(f"line_{n} = {n}" for n in range(40))
    text = f"# Big\n\n```\n{body}\n```\n"
    policy = ChunkingPolicy(max_lines=10, max_chars=10_000, overlap_lines=0)

    analysis = analyse("big.md", text, "markdown", policy)

    assert all(c.end_line - c.start_line + 1 <= 10 for c in analysis.chunks)
    assert analysis.chunks[-1].end_line == 44  # the closing fence


def test_html_is_reduced_to_text_with_its_structure() -> None:
    page = """<!doctype html>
<html><head><title>Guide &amp; FAQ</title>
<script>document.write("<h1>not a heading</h1>")</script>
<style>h1 { color: red }</style></head>
<body><nav><a href="/">Home</a> <a href="/api">API</a></nav>
<h1>Locus &mdash; Guide</h1>
<p>Locus finds <b>code</b> &amp; documentation,
across files.</p>
<h2 id="upgrading">Upgrading</h2>
<ul><li>Stop the service</li><li>Run <code>locus upgrade</code></li></ul>
<pre><code>locus upgrade --to 2.0
if a &lt; b:
    migrate()
</code></pre>
<table><tr><th>Setting</th><th>Default</th></tr><tr><td>port</td><td>50051</td></tr></table>
</body></html>
"""
    analysis = analyse("docs/guide.html", page, "html")

    assert sections(analysis) == [
        ("docs/guide.html", "section", 1, 16),
        ("docs/guide.html > Locus — Guide", "section", 6, 15),
        ("docs/guide.html > Locus — Guide > Upgrading", "section", 9, 15),
    ]
    assert analysis.symbols[0].signature == "Guide & FAQ"  # the page's title
    intro, upgrading = analysis.chunks
    assert (intro.start_line, intro.end_line) == (6, 8)
    assert intro.text == "# Locus — Guide\nLocus finds code & documentation, across files."
    assert (upgrading.start_line, upgrading.end_line) == (9, 15)
    assert upgrading.text == (
        "## Upgrading\n"
        "- Stop the service\n"
        "- Run locus upgrade\n"
        "locus upgrade --to 2.0\nif a < b:\n    migrate()\n"
        "Setting | Default\n"
        "port | 50051"
    )
    every_text = "\n".join(c.text for c in analysis.chunks)
    for dropped in ("not a heading", "color", "Home", "API", "<", "&amp;"):
        assert dropped not in every_text.replace("a < b", "")


def test_a_marked_section_html_parser_cannot_name_is_read_as_text() -> None:
    # Highlighted terminal output saved as a page: `<![` before an escape sequence made
    # html.parser raise, and the file went unindexed.
    page = "<h1>Output</h1>\n<pre><![\x1b[0m\x1b[38;2;249;38mCDATA</pre>\n<p>after it</p>\n"
    analysis = analyse("tests/highlighted/output.html", page, "html")
    every_text = "\n".join(c.text for c in analysis.chunks)
    assert "<![" in every_text
    assert "CDATA" in every_text
    assert "after it" in every_text
    assert sections(analysis)[-1][:2] == ("tests/highlighted/output.html > Output", "section")


def test_restructuredtext_titles_take_levels_in_the_order_their_adornments_appear() -> None:
    text = """\
=====
Locus
=====

Overview text.

Installation
============

Install it::

    pip install locus

    locus up

Upgrading
---------

Run the upgrade.

.. code-block:: python

   upgrade()
   Not a title
   -----------

Reference
=========

The API.
"""
    analysis = analyse("docs/index.rst", text, "restructuredtext")

    assert sections(analysis) == [
        ("docs/index.rst", "section", 1, 30),
        ("docs/index.rst > Locus", "section", 1, 30),
        ("docs/index.rst > Locus > Installation", "section", 7, 25),
        ("docs/index.rst > Locus > Installation > Upgrading", "section", 16, 25),
        ("docs/index.rst > Locus > Reference", "section", 27, 30),
    ]
    installation_chunks = [
        (c.start_line, c.end_line)
        for c in analysis.chunks
        if c.symbol_qualified_name == "docs/index.rst > Locus > Installation"
    ]
    assert installation_chunks == [(7, 14)]


def test_asciidoc_headings_and_delimited_blocks() -> None:
    text = """\
= Locus Manual

Intro.

== Installation

[source,bash]
----
pip install locus
== not a heading
----

=== Upgrading

Run `locus upgrade`.
"""
    analysis = analyse("docs/manual.adoc", text, "asciidoc")

    assert sections(analysis) == [
        ("docs/manual.adoc", "section", 1, 15),
        ("docs/manual.adoc > Locus Manual", "section", 1, 15),
        ("docs/manual.adoc > Locus Manual > Installation", "section", 5, 15),
        ("docs/manual.adoc > Locus Manual > Installation > Upgrading", "section", 13, 15),
    ]
    assert chunk_owners(analysis)[1] == ("docs/manual.adoc > Locus Manual > Installation", 5, 11)


def test_the_format_comes_from_the_language_or_else_the_extension() -> None:
    assert document_format("docs/a.md", "markdown") == "markdown"
    assert document_format("docs/a.asciidoc", "") == "asciidoc"
    assert document_format("site/index.htm", "") == "html"
    assert document_format("keys/a.asc", "pgp") is None
    assert document_format("src/a.py", "python") is None


def test_a_document_that_is_not_utf8_is_undecodable() -> None:
    with pytest.raises(UndecodableSource):
        extract("docs/a.md", b"# Caf\xe9\n", "markdown")


@pytest.mark.parametrize(
    ("path", "language", "read"),
    [
        ("src/app.py", "python", True),
        ("cmd/main.go", "go", True),
        ("docs/guide.md", "markdown", True),
        ("docs/index.rst", "restructuredtext", True),
        ("site/page.html", "html", True),
        (".github/workflows/ci.yml", "yaml", False),
        ("Makefile", "", False),
        ("notes.txt", "text", False),
    ],
)
def test_extract_reads_parsed_languages_and_documents_and_nothing_else(
    path: str, language: str, read: bool
) -> None:
    """What the ast service (and the offline replays) give ``extract``; the rest becomes text
    windows."""
    assert extracts(path, language) is read
    if read:
        source = b"package main\n" if language == "go" else b"x = 1\n"
        assert isinstance(extract(path, source, language), FileAnalysis)
