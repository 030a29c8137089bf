"""Mapping between locus.v1 messages and the impact domain (the only place that does it)."""

from __future__ import annotations

from locus.impact.domain import (
    GraphDependency,
    GraphRelation,
    GraphSymbol,
    ImpactedFile,
    ImpactedSymbol,
    ImpactStep,
    ParsedFile,
    RelationKind,
    SymbolKind,
)
from locus.impact.domain.model import ChangeKind
from locus.v1 import common_pb2, events_pb2, impact_pb2

_SYMBOL_KINDS: dict[common_pb2.SymbolKind, SymbolKind] = {
    common_pb2.SYMBOL_KIND_MODULE: "module",
    common_pb2.SYMBOL_KIND_CLASS: "class",
    common_pb2.SYMBOL_KIND_FUNCTION: "function",
    common_pb2.SYMBOL_KIND_METHOD: "method",
    common_pb2.SYMBOL_KIND_INTERFACE: "interface",
    common_pb2.SYMBOL_KIND_STRUCT: "struct",
    common_pb2.SYMBOL_KIND_ENUM: "enum",
    common_pb2.SYMBOL_KIND_TRAIT: "trait",
    common_pb2.SYMBOL_KIND_NAMESPACE: "namespace",
    common_pb2.SYMBOL_KIND_CONSTRUCTOR: "constructor",
    common_pb2.SYMBOL_KIND_SECTION: "section",
    common_pb2.SYMBOL_KIND_SIGNATURE: "signature",
    common_pb2.SYMBOL_KIND_TYPE_ALIAS: "type_alias",
    common_pb2.SYMBOL_KIND_CONSTANT: "constant",
}
_SYMBOL_KIND_VALUES = {name: value for value, name in _SYMBOL_KINDS.items()}
_RELATION_KINDS: dict[common_pb2.RelationKind, RelationKind] = {
    common_pb2.RELATION_KIND_CONTAINS: "contains",
    common_pb2.RELATION_KIND_CALLS: "calls",
    common_pb2.RELATION_KIND_IMPORTS: "imports",
    common_pb2.RELATION_KIND_INHERITS: "inherits",
    common_pb2.RELATION_KIND_REFERENCES: "references",
    common_pb2.RELATION_KIND_OVERRIDES: "overrides",
}
_RELATION_KIND_VALUES = {name: value for value, name in _RELATION_KINDS.items()}
_CHANGES: dict[common_pb2.ChangeType, ChangeKind] = {
    common_pb2.CHANGE_TYPE_ADDED: "added",
    common_pb2.CHANGE_TYPE_MODIFIED: "modified",
    common_pb2.CHANGE_TYPE_DELETED: "deleted",
}
CHANGE_TYPES: dict[ChangeKind, common_pb2.ChangeType] = {
    **{kind: change for change, kind in _CHANGES.items()},
    "unspecified": common_pb2.CHANGE_TYPE_UNSPECIFIED,
}


def change_kind(change_type: common_pb2.ChangeType) -> ChangeKind:
    """A files.parsed file's change type in domain terms ("unspecified" when unknown)."""
    return _CHANGES.get(change_type, "unspecified")


class UnknownRelationKind(ValueError):
    pass


def parsed_file_from_event(event: events_pb2.FilesParsed) -> ParsedFile:
    """Raises UnknownRelationKind for a relation kind this service does not know."""
    file = event.file
    symbols = tuple(
        GraphSymbol(
            node_id=s.node_id,
            qualified_name=s.qualified_name,
            scope_name=s.scope_name,
            name=s.name,
            kind=_SYMBOL_KINDS.get(s.kind, "unspecified"),
            file_id=file.file_id,
            relative_path=s.location.relative_path or file.relative_path,
            start_line=s.location.start_line,
            end_line=s.location.end_line,
            language=s.location.language or file.language,
            snapshot_id=s.location.snapshot_id or event.snapshot_id,
            signature=s.signature,
            docstring=s.docstring,
            parent_node_id=s.parent_node_id,
            parent_qualified_name=s.parent_qualified_name,
        )
        for s in event.symbols
    )
    relations = []
    for r in event.relations:
        kind = _RELATION_KINDS.get(r.kind)
        if kind is None:
            raise UnknownRelationKind(f"relation kind {r.kind} of {file.file_id} is not known")
        relations.append(
            GraphRelation(
                kind=kind,
                source_node_id=r.source_node_id,
                source_qualified_name=r.source_qualified_name,
                target_name=r.target_name,
                target_qualified_name=r.target_qualified_name,
                target_node_id=r.target_node_id,
                file_id=file.file_id,
                line=r.line,
            )
        )
    dependencies = tuple(
        GraphDependency(
            source_file_id=file.file_id,
            target_module=d.target_module,
            target_file_id=d.target_file_id,
            line=d.line,
        )
        for d in event.dependencies
    )
    return ParsedFile(
        project_id=event.project_id,
        job_id=event.job_id,
        snapshot_id=event.snapshot_id,
        snapshot_seq=event.snapshot_seq,
        file_id=file.file_id,
        sha256=file.sha256,
        relative_path=file.relative_path,
        language=file.language,
        change=change_kind(file.change_type),
        module_name=event.module_name,
        part_index=event.part_index,
        part_count=event.part_count,
        symbols=symbols,
        relations=tuple(relations),
        dependencies=dependencies,
        unsupported_language=event.unsupported_language,
    )


def symbol_message(project_id: str, symbol: GraphSymbol) -> common_pb2.Symbol:
    return common_pb2.Symbol(
        node_id=symbol.node_id,
        qualified_name=symbol.qualified_name,
        scope_name=symbol.scope_name,
        name=symbol.name,
        kind=_SYMBOL_KIND_VALUES.get(symbol.kind, common_pb2.SYMBOL_KIND_UNSPECIFIED),
        location=common_pb2.CodeLocation(
            project_id=project_id,
            snapshot_id=symbol.snapshot_id,
            file_id=symbol.file_id,
            relative_path=symbol.relative_path,
            start_line=symbol.start_line,
            end_line=symbol.end_line,
            language=symbol.language,
            node_id=symbol.node_id,
        ),
        signature=symbol.signature,
        docstring=symbol.docstring,
        parent_node_id=symbol.parent_node_id,
        parent_qualified_name=symbol.parent_qualified_name,
    )


def step_message(step: ImpactStep) -> impact_pb2.ImpactStep:
    return impact_pb2.ImpactStep(
        relation=_RELATION_KIND_VALUES[step.relation],
        reverse=step.reverse,
        from_node_id=step.from_node_id,
        to_node_id=step.to_node_id,
    )


def impacted_symbol_message(project_id: str, item: ImpactedSymbol) -> impact_pb2.ImpactedSymbol:
    return impact_pb2.ImpactedSymbol(
        symbol=symbol_message(project_id, item.symbol),
        score=item.score,
        distance=item.distance,
        reason=[step_message(s) for s in item.reason],
    )


def impacted_file_message(item: ImpactedFile) -> impact_pb2.ImpactedFile:
    return impact_pb2.ImpactedFile(
        file_id=item.file.file_id,
        relative_path=item.file.relative_path,
        score=item.score,
        distance=item.distance,
        reason=[step_message(s) for s in item.reason],
    )
