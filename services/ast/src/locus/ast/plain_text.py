"""Files the extractor cannot parse (documentation, configuration, languages without a spec)
are still searchable: they become consecutive line windows, ``fragment`` chunks of no symbol."""

from __future__ import annotations

import hashlib

from locus.ast.domain import Chunk, FileAnalysis


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts them (on ``\\n`` only), without a trailing empty line."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def line_windows(text: str, *, max_lines: int, max_chars: int) -> tuple[Chunk, ...]:
    """Non-overlapping windows of at most ``max_lines`` lines and, where lines allow it,
    ``max_chars`` characters; a single longer line is a window of its own. Blank files and
    whitespace-only windows give no chunk."""
    lines = split_lines(text)
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        end = start + 1
        size = len(lines[start])
        while end < len(lines) and end - start < max_lines:
            size += len(lines[end]) + 1
            if size > max_chars:
                break
            end += 1
        window = "\n".join(lines[start:end])
        if window.strip():
            chunks.append(
                Chunk(
                    ordinal=len(chunks),
                    kind="fragment",
                    symbol_qualified_name=None,
                    start_line=start + 1,
                    end_line=end,
                    text=window,
                    content_sha256=hashlib.sha256(window.encode("utf-8")).hexdigest(),
                )
            )
        start = end
    return tuple(chunks)


def plain_text_analysis(
    text: str, language: str, *, max_lines: int, max_chars: int
) -> FileAnalysis:
    """An analysis with no symbols or relations, only line-window chunks."""
    return FileAnalysis(
        language=language,
        module_name="",
        symbols=(),
        relations=(),
        dependencies=(),
        chunks=line_windows(text, max_lines=max_lines, max_chars=max_chars),
        parse_errors=0,
    )
