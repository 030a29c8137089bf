"""Knowledge documents (Markdown, reStructuredText, AsciiDoc, HTML) parsed into sections: one
``section`` symbol per heading, named by its heading path, with chunks aligned to sections.

``document_format`` tells from the language ingestion gave a file (or, when it gave none, from
the file's extension) which parser reads it; ``extract_document`` returns its analysis."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from locus.ast.domain.documents.asciidoc import asciidoc_outline
from locus.ast.domain.documents.html import html_outline
from locus.ast.domain.documents.markdown import markdown_outline
from locus.ast.domain.documents.outline import DocumentOutline
from locus.ast.domain.documents.restructuredtext import restructuredtext_outline
from locus.ast.domain.documents.sections import SEPARATOR, document_analysis
from locus.ast.domain.model import ChunkingPolicy, FileAnalysis

_OUTLINES: dict[str, Callable[[str], DocumentOutline]] = {
    "markdown": markdown_outline,
    "restructuredtext": restructuredtext_outline,
    "asciidoc": asciidoc_outline,
    "html": html_outline,
}
_EXTENSION_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "restructuredtext",
    ".rest": "restructuredtext",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".asc": "asciidoc",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
}


def document_format(relative_path: str, language: str) -> str | None:
    """The document format of a file: its language when that is one, else (no language given)
    its extension's; None for anything else (a named language wins: ``.asc`` may be a key)."""
    if language in _OUTLINES:
        return language
    if language:
        return None
    return _EXTENSION_FORMATS.get(PurePosixPath(relative_path.lower()).suffix)


def extract_document(
    relative_path: str, text: str, document: str, policy: ChunkingPolicy
) -> FileAnalysis:
    """The sections of a document of format ``document`` (from ``document_format``); the
    analysis carries that format as its language."""
    return document_analysis(relative_path, _OUTLINES[document](text), document, policy)


__all__ = ["SEPARATOR", "document_format", "extract_document"]
