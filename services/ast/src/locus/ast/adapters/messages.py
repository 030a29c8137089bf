"""Stored rows → locus.v1 protobuf messages (Symbol, Relation, Chunk, FileDependency,
FilesParsed parts); the only place that knows both sides."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.message import Message

from locus.ast.adapters.store import (
    FileIndex,
    OutlineSymbol,
    ResolvedDependency,
    ResolvedRelation,
)
from locus.ast.adapters.tables import ChunkRow, FileRow, SymbolRow
from locus.ast.domain.language_spec import SourceRoot
from locus.v1 import common_pb2, events_pb2

SYMBOL_KINDS = {
    "module": common_pb2.SYMBOL_KIND_MODULE,
    "class": common_pb2.SYMBOL_KIND_CLASS,
    "function": common_pb2.SYMBOL_KIND_FUNCTION,
    "method": common_pb2.SYMBOL_KIND_METHOD,
    "interface": common_pb2.SYMBOL_KIND_INTERFACE,
    "struct": common_pb2.SYMBOL_KIND_STRUCT,
    "enum": common_pb2.SYMBOL_KIND_ENUM,
    "trait": common_pb2.SYMBOL_KIND_TRAIT,
    "namespace": common_pb2.SYMBOL_KIND_NAMESPACE,
    "constructor": common_pb2.SYMBOL_KIND_CONSTRUCTOR,
    "section": common_pb2.SYMBOL_KIND_SECTION,
    "signature": common_pb2.SYMBOL_KIND_SIGNATURE,
    "type_alias": common_pb2.SYMBOL_KIND_TYPE_ALIAS,
    "constant": common_pb2.SYMBOL_KIND_CONSTANT,
}
SYMBOL_KIND_NAMES = {number: name for name, number in SYMBOL_KINDS.items()}
RELATION_KINDS = {
    "contains": common_pb2.RELATION_KIND_CONTAINS,
    "calls": common_pb2.RELATION_KIND_CALLS,
    "imports": common_pb2.RELATION_KIND_IMPORTS,
    "inherits": common_pb2.RELATION_KIND_INHERITS,
    "references": common_pb2.RELATION_KIND_REFERENCES,
}
CHUNK_KINDS = {
    "function": common_pb2.CHUNK_KIND_FUNCTION,
    "method": common_pb2.CHUNK_KIND_METHOD,
    "class_header": common_pb2.CHUNK_KIND_CLASS_HEADER,
    "module": common_pb2.CHUNK_KIND_MODULE,
    "fragment": common_pb2.CHUNK_KIND_FRAGMENT,
    "section": common_pb2.CHUNK_KIND_SECTION,
}
_ITEM_FIELDS = ("symbols", "relations", "dependencies", "chunks")


def source_root(changed: events_pb2.ChangedFile) -> SourceRoot:
    """The source root ingestion detected for the file (naming starts there)."""
    aliases = changed.source_root_aliases
    return SourceRoot(
        changed.source_root,
        changed.source_root_name,
        changed.source_root_entry,
        tuple((a.pattern, tuple(a.targets)) for a in aliases if not a.other_package),
        tuple(
            (
                a.pattern,
                tuple(a.targets),
                SourceRoot(a.package_root, a.package_name, a.package_entry),
            )
            for a in aliases
            if a.other_package
        ),
    )


def location(
    file: FileRow, start_line: int, end_line: int, node_id: str = ""
) -> common_pb2.CodeLocation:
    return common_pb2.CodeLocation(
        start_line=start_line, end_line=end_line, node_id=node_id, **_in_file(file)
    )


def _in_file(file: FileRow) -> dict[str, str]:
    """The file's part of a CodeLocation."""
    return {
        "project_id": file.project_id,
        "snapshot_id": file.snapshot_id,
        "file_id": file.file_id,
        "relative_path": file.relative_path,
        "language": file.language,
    }


def symbol_message(symbol: SymbolRow, file: FileRow) -> common_pb2.Symbol:
    return _symbol(
        symbol, location(file, symbol.start_line, symbol.end_line, symbol.node_id), symbol.docstring
    )


def outline_messages(symbols: Sequence[OutlineSymbol], file: FileRow) -> list[common_pb2.Symbol]:
    """Symbols as an outline lists them: everything but their docstrings (the file's part of
    each location read once: an outline holds hundreds)."""
    in_file = _in_file(file)
    return [
        _symbol(
            symbol,
            common_pb2.CodeLocation(
                start_line=symbol.start_line,
                end_line=symbol.end_line,
                node_id=symbol.node_id,
                **in_file,
            ),
            docstring="",
        )
        for symbol in symbols
    ]


def _symbol(
    symbol: SymbolRow | OutlineSymbol, where: common_pb2.CodeLocation, docstring: str
) -> common_pb2.Symbol:
    return common_pb2.Symbol(
        node_id=symbol.node_id,
        qualified_name=symbol.qualified_name,
        scope_name=symbol.scope_name,
        name=symbol.name,
        kind=SYMBOL_KINDS.get(symbol.kind, common_pb2.SYMBOL_KIND_UNSPECIFIED),
        location=where,
        signature=symbol.signature,
        docstring=docstring,
        parent_node_id=symbol.parent_node_id,
        parent_qualified_name=symbol.parent_qualified_name,
    )


def relation_message(resolved: ResolvedRelation) -> common_pb2.Relation:
    relation = resolved.relation
    return common_pb2.Relation(
        kind=RELATION_KINDS.get(relation.kind, common_pb2.RELATION_KIND_UNSPECIFIED),
        source_node_id=relation.source_node_id,
        source_qualified_name=relation.source_qualified_name,
        target_name=relation.target_name,
        target_qualified_name=relation.target_qualified_name,
        target_node_id=resolved.target_node_id,
        line=relation.line,
        file_id=relation.file_id,
    )


def dependency_message(dependency: ResolvedDependency) -> common_pb2.FileDependency:
    return common_pb2.FileDependency(
        source_file_id=dependency.source_file_id,
        target_module=dependency.target_module,
        target_file_id=dependency.target_file_id,
        line=dependency.line,
    )


def chunk_message(chunk: ChunkRow, file: FileRow) -> common_pb2.Chunk:
    return common_pb2.Chunk(
        chunk_id=chunk.chunk_id,
        location=location(file, chunk.start_line, chunk.end_line, chunk.symbol_node_id),
        kind=CHUNK_KINDS.get(chunk.kind, common_pb2.CHUNK_KIND_UNSPECIFIED),
        symbol_node_id=chunk.symbol_node_id,
        symbol_qualified_name=chunk.symbol_qualified_name,
        text=chunk.text,
        content_sha256=chunk.content_sha256,
        ordinal=chunk.ordinal,
    )


def files_parsed_parts(
    header: events_pb2.FilesParsed, index: FileIndex, *, max_items: int, max_bytes: int
) -> list[events_pb2.FilesParsed]:
    """``header`` (job, snapshot, file, flags) repeated on every part; the file's symbols,
    relations, dependencies and chunks spread over parts of at most ``max_items`` items and,
    unless one item alone is larger, ``max_bytes`` bytes."""
    items: list[tuple[str, Message]] = [
        *(("symbols", symbol_message(s, index.file)) for s in index.symbols),
        *(("relations", relation_message(r)) for r in index.relations),
        *(("dependencies", dependency_message(d)) for d in index.dependencies),
        *(("chunks", chunk_message(c, index.file)) for c in index.chunks),
    ]
    return split_into_parts(header, items, max_items=max_items, max_bytes=max_bytes)


def split_into_parts(
    header: events_pb2.FilesParsed,
    items: Sequence[tuple[str, Message]],
    *,
    max_items: int,
    max_bytes: int,
) -> list[events_pb2.FilesParsed]:
    parts: list[events_pb2.FilesParsed] = []
    count = size = 0
    for field, item in items:
        item_size = item.ByteSize() + 8  # tag and length prefix, generously
        if not parts or count >= max_items or (count and size + item_size > max_bytes):
            part = events_pb2.FilesParsed()
            part.CopyFrom(header)
            for name in _ITEM_FIELDS:
                part.ClearField(name)
            parts.append(part)
            count = 0
            size = header.ByteSize()
        getattr(parts[-1], field).append(item)
        count += 1
        size += item_size
    if not parts:
        parts.append(events_pb2.FilesParsed())
        parts[0].CopyFrom(header)
    for part_index, part in enumerate(parts):
        part.part_index = part_index
        part.part_count = len(parts)
    return parts
