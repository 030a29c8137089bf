"""A document's outline into symbols, relations and chunks: every heading opens a ``section``
symbol that runs until the next heading of its level or above, the file itself is the root
section, a ``contains`` relation goes from each section to each of its subsections, and each
section's own text (up to its first subsection) becomes ``section`` chunks.

Names: a section's ``name`` is its title, its ``scope_name`` the heading path inside the file
(``Installation > Upgrading``) and its ``qualified_name`` the file's path followed by that path
(``docs/manual.md > Installation > Upgrading``; the root section is the bare path), so two
documents never share a name and a citation reads as where to look. A second heading with the
same path in one file is told apart by a count: ``Example (2)``.

Chunks: a section's blocks are packed in order while the chunking policy's line and character
limits allow; a chunk boundary falls only between blocks. A code block over the limits stays
whole up to ``CODE_BLOCK_CAP`` times them; any larger block is cut into line windows."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from locus.ast.domain.documents.outline import Block, DocumentOutline, Heading
from locus.ast.domain.model import Chunk, ChunkingPolicy, FileAnalysis, Relation, Symbol

SEPARATOR = " > "
CODE_BLOCK_CAP = 3
_DOCSTRING_CHARS = 300


@dataclass
class _Section:
    qualified_name: str
    scope_name: str
    name: str
    level: int
    start_line: int
    end_line: int
    signature: str
    parent: _Section | None
    blocks: list[Block] = field(default_factory=list)  # its own text, heading first


def document_analysis(
    relative_path: str, outline: DocumentOutline, language: str, policy: ChunkingPolicy
) -> FileAnalysis:
    root = _Section(
        qualified_name=relative_path,
        scope_name="",
        name=PurePosixPath(relative_path).name,
        level=0,
        start_line=1,
        end_line=max(outline.line_count, 1),
        signature=outline.title,
        parent=None,
    )
    sections = [root]
    open_sections = [root]
    taken = {relative_path}
    for item in outline.items:
        if isinstance(item, Heading):
            while open_sections[-1].level >= item.level and open_sections[-1] is not root:
                open_sections.pop()
            section = _open_section(relative_path, item, open_sections[-1], outline, taken)
            sections.append(section)
            open_sections.append(section)
        else:
            open_sections[-1].blocks.append(item)
        for section in open_sections:
            section.end_line = max(section.end_line, item.end_line)
    symbols = tuple(_symbol(section) for section in sections)
    relations = tuple(
        Relation(
            "contains",
            section.parent.qualified_name,
            section.name,
            section.qualified_name,
            section.start_line,
        )
        for section in sections
        if section.parent is not None
    )
    chunks: list[Chunk] = []
    for section in sections:
        if section is not root and len(section.blocks) == 1:
            continue  # a heading with no text of its own: its subsections carry its words
        for start, end, text in _chunk_texts(section.blocks, outline, policy):
            chunks.append(
                Chunk(
                    ordinal=len(chunks),
                    kind="section",
                    symbol_qualified_name=section.qualified_name,
                    start_line=start,
                    end_line=end,
                    text=text,
                    content_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                )
            )
    return FileAnalysis(
        language=language,
        module_name="",
        symbols=symbols,
        relations=relations,
        dependencies=(),
        chunks=tuple(chunks),
        parse_errors=0,
    )


def _open_section(
    relative_path: str,
    heading: Heading,
    parent: _Section,
    outline: DocumentOutline,
    taken: set[str],
) -> _Section:
    name, count = heading.title, 1
    while True:
        scope = f"{parent.scope_name}{SEPARATOR}{name}" if parent.scope_name else name
        qualified_name = f"{relative_path}{SEPARATOR}{scope}"
        if qualified_name not in taken:
            break
        count += 1
        name = f"{heading.title} ({count})"
    taken.add(qualified_name)
    rendered = f"{'#' * heading.level} {heading.title}"
    if outline.source_lines is not None:
        text = "\n".join(outline.source_lines[heading.start_line - 1 : heading.end_line])
        signature = outline.source_lines[heading.start_line - 1].strip() or rendered
    else:
        text = signature = rendered
    return _Section(
        qualified_name=qualified_name,
        scope_name=scope,
        name=name,
        level=heading.level,
        start_line=heading.start_line,
        end_line=heading.end_line,
        signature=signature,
        parent=parent,
        blocks=[Block(heading.start_line, heading.end_line, text)],
    )


def _symbol(section: _Section) -> Symbol:
    own = section.blocks if section.parent is None else section.blocks[1:]
    summary = next((" ".join(b.text.split()) for b in own if not b.code), "")
    if len(summary) > _DOCSTRING_CHARS:
        summary = summary[: _DOCSTRING_CHARS - 1].rstrip() + "…"
    return Symbol(
        qualified_name=section.qualified_name,
        scope_name=section.scope_name,
        name=section.name,
        kind="section",
        start_line=section.start_line,
        end_line=section.end_line,
        signature=section.signature,
        docstring=summary or None,
        parent_qualified_name=section.parent.qualified_name if section.parent else None,
    )


def _chunk_texts(
    blocks: list[Block], outline: DocumentOutline, policy: ChunkingPolicy
) -> list[tuple[int, int, str]]:
    """(start line, end line, text) of each chunk of one section's blocks, in order."""

    def fits(lines: int, chars: int, factor: int = 1) -> bool:
        return lines <= policy.max_lines * factor and chars <= policy.max_chars * factor

    groups: list[list[Block]] = []
    current: list[Block] = []
    for block in blocks:
        lines, chars = block.end_line - block.start_line + 1, len(block.text)
        if not fits(lines, chars):
            if current:
                groups.append(current)
                current = []
            if block.code and fits(lines, chars, CODE_BLOCK_CAP):
                groups.append([block])
            else:
                groups.extend([piece] for piece in _pieces(block, policy))
            continue
        if current:
            span = block.end_line - current[0].start_line + 1
            size = sum(len(b.text) + 1 for b in current) + chars
            if not fits(span, size):
                groups.append(current)
                current = []
        current.append(block)
    if current:
        groups.append(current)
    texts = []
    for group in groups:
        start, end = group[0].start_line, group[-1].end_line
        if outline.source_lines is not None and len(group) > 1:
            text = "\n".join(outline.source_lines[start - 1 : end])
        else:
            text = "\n".join(block.text for block in group)
        texts.append((start, end, text))
    return texts


def _pieces(block: Block, policy: ChunkingPolicy) -> list[Block]:
    """A block over the limits as consecutive line windows (each line kept whole). Pieces get
    their own lines when the block's text is its source lines, else the block's whole range."""
    lines = block.text.split("\n")
    exact = len(lines) == block.end_line - block.start_line + 1
    pieces: list[Block] = []
    start = 0
    while start < len(lines):
        end, size = start + 1, len(lines[start])
        while end < len(lines) and end - start < policy.max_lines:
            size += len(lines[end]) + 1
            if size > policy.max_chars:
                break
            end += 1
        text = "\n".join(lines[start:end])
        if text.strip():
            first = block.start_line + start if exact else block.start_line
            last = block.start_line + end - 1 if exact else block.end_line
            pieces.append(Block(first, last, text, block.code))
        start = end
    return pieces
