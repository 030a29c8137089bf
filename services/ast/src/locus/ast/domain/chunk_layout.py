"""Decides which source lines become which chunk: module runs, functions and class outlines.

A definition gets its own chunk when it is a direct statement of the module or of a class that
has its own chunk; anything nested deeper (functions inside functions, definitions under `if`)
stays inside the chunk of the code around it, so each line has exactly one owner.
"""

from collections.abc import Sequence

from tree_sitter import Node

from locus.ast.domain.chunking import ChunkDraft
from locus.ast.domain.definitions import Definition
from locus.ast.domain.model import ChunkKind
from locus.ast.domain.source_text import SourceText

_STUB_SUFFIX = " ..."


def _statement_breaks(
    statements: Sequence[Node], source: SourceText, comment_types: frozenset[str]
) -> set[int]:
    """Source lines where statements start; comments on their own lines stay with the statement
    that follows them, and a comment trailing a statement's last line is not a statement."""
    breaks: set[int] = set()
    comment_start: int | None = None
    previous_end = 0
    for statement in statements:
        line = source.start_line(statement)
        if statement.type in comment_types:
            if comment_start is None and line != previous_end:
                comment_start = line
            continue
        breaks.add(comment_start if comment_start is not None else line)
        comment_start = None
        previous_end = source.end_line(statement)
    if comment_start is not None:
        breaks.add(comment_start)
    return breaks


def _exact_draft(
    kind: ChunkKind,
    symbol: str,
    start_line: int,
    end_line: int,
    statements: Sequence[Node],
    source: SourceText,
    comment_types: frozenset[str],
) -> ChunkDraft:
    breaks = _statement_breaks(statements, source, comment_types)
    return ChunkDraft(
        kind=kind,
        symbol_qualified_name=symbol,
        lines=source.lines[start_line - 1 : end_line],
        line_numbers=tuple(range(start_line, end_line + 1)),
        breaks=frozenset(line - start_line for line in breaks),
        start_line=start_line,
        end_line=end_line,
    )


def _class_outline(
    definition: Definition,
    own_chunk_by_outer_id: dict[int, Definition],
    source: SourceText,
    opened: set[int],
) -> ChunkDraft:
    """The class header and docstring, its class-level statements verbatim, and each member
    with its own chunk reduced to its decorators and header followed by ` ...`."""
    header_last_line = source.line_of_byte(definition.header_end_byte - 1)
    numbers = list(range(definition.start_line, header_last_line + 1))
    lines = [source.lines[number - 1] for number in numbers]
    breaks: set[int] = set()
    last_emitted = header_last_line
    for statement in _statements(definition.body, opened):
        first_line = source.start_line(statement)
        if first_line <= last_emitted:
            continue
        if first_line > last_emitted + 1:
            numbers.append(last_emitted + 1)
            lines.append("")
        breaks.add(len(lines))
        member = own_chunk_by_outer_id.get(statement.id)
        if member is None:
            last_emitted = source.end_line(statement)
            numbers.extend(range(first_line, last_emitted + 1))
            lines.extend(source.lines[first_line - 1 : last_emitted])
            continue
        stub = source.decode(source.line_start_byte(first_line), member.header_end_byte)
        stub_lines = f"{stub}{_STUB_SUFFIX}".split("\n")
        numbers.extend(range(first_line, first_line + len(stub_lines)))
        lines.extend(stub_lines)
        last_emitted = first_line + len(stub_lines) - 1
    return ChunkDraft(
        kind="class_header",
        symbol_qualified_name=definition.qualified_name,
        lines=tuple(lines),
        line_numbers=tuple(numbers),
        breaks=frozenset(breaks),
        start_line=definition.start_line,
        end_line=definition.end_line,
    )


def _definitions_with_own_chunk(
    root: Node, definitions: list[Definition], transparent: frozenset[str], opened: set[int]
) -> list[Definition]:
    """Direct statements of the module, and direct statements of classes that are themselves in
    the result; `definitions` is in document order, so parents come before children. A
    statement inside `transparent` blocks (C `#ifdef`) counts as a statement of the block
    around them; the ids of the blocks so opened are added to `opened`."""
    owners: list[Definition] = []
    owner_ids: set[int] = set()
    for definition in definitions:
        parent = definition.parent
        if parent is None:
            container_id = root.id
        elif parent.is_class and id(parent) in owner_ids:
            container_id = parent.body.id
        else:
            continue
        outer_parent = definition.outer.parent
        blocks: list[int] = []
        while (
            outer_parent is not None
            and outer_parent.id != container_id
            and outer_parent.type in transparent
        ):
            blocks.append(outer_parent.id)
            outer_parent = outer_parent.parent
        if outer_parent is not None and outer_parent.id == container_id:
            owners.append(definition)
            owner_ids.add(id(definition))
            opened.update(blocks)
    return owners


def _statements(block: Node, opened: set[int]) -> list[Node]:
    """`block`'s named children, with the children of `opened` blocks in their place."""
    statements: list[Node] = []
    for child in block.named_children:
        if child.id in opened:
            statements.extend(_statements(child, opened))
        else:
            statements.append(child)
    return statements


def layout_chunks(
    root: Node,
    source: SourceText,
    module_name: str,
    definitions: list[Definition],
    comment_types: frozenset[str],
    transparent: frozenset[str] = frozenset(),
) -> list[ChunkDraft]:
    """Drafts for module-level runs of statements, functions and methods, and class outlines."""
    opened: set[int] = set()
    owners = _definitions_with_own_chunk(root, definitions, transparent, opened)
    own_chunk_by_outer_id = {owner.outer.id: owner for owner in owners}
    drafts: list[ChunkDraft] = []

    run: list[Node] = []

    def close_run() -> None:
        if run:
            start, end = source.start_line(run[0]), source.end_line(run[-1])
            drafts.append(
                _exact_draft("module", module_name, start, end, run, source, comment_types)
            )
            run.clear()

    for statement in _statements(root, opened):
        if statement.id in own_chunk_by_outer_id:
            close_run()
        else:
            run.append(statement)
    close_run()

    for owner in owners:
        if owner.is_class:
            drafts.append(_class_outline(owner, own_chunk_by_outer_id, source, opened))
        else:
            kind: ChunkKind = "method" if owner.kind in ("method", "constructor") else "function"
            statements = owner.body.named_children
            drafts.append(
                _exact_draft(
                    kind,
                    owner.qualified_name,
                    owner.start_line,
                    owner.end_line,
                    statements,
                    source,
                    comment_types,
                )
            )
    return drafts
