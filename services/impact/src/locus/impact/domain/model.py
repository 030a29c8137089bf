"""Plain data of the impact graph: the symbols, relations and file dependencies of a project as
received from files.parsed, and what an impact query asks and answers.

Lines are 1-based and inclusive. Nothing here knows about protobuf, SQL or NATS.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from locus.codepaths.relation_words import relation_label

SymbolKind = Literal[
    "module",
    "class",
    "function",
    "method",
    "interface",
    "struct",
    "enum",
    "trait",
    "namespace",
    "constructor",
    "section",
    "signature",
    "type_alias",
    "constant",
    "unspecified",
]
RelationKind = Literal["contains", "calls", "imports", "inherits", "references", "overrides"]
ChangeKind = Literal["added", "modified", "deleted", "unspecified"]
ReportStatus = Literal["indexed", "skipped", "failed"]


@dataclass(frozen=True, slots=True)
class GraphSymbol:
    """A module, class, function or method of one file of the project."""

    node_id: str
    qualified_name: str
    scope_name: str
    name: str
    kind: SymbolKind
    file_id: str
    relative_path: str
    start_line: int
    end_line: int
    language: str = ""
    snapshot_id: str = ""
    signature: str = ""
    docstring: str = ""
    parent_node_id: str = ""
    parent_qualified_name: str = ""


@dataclass(frozen=True, slots=True)
class GraphRelation:
    """An edge as the ast service reported it. The target is a node id when the ast service
    could resolve it, else only a qualified name that the graph resolves against its symbols."""

    kind: RelationKind
    source_node_id: str
    source_qualified_name: str
    target_name: str
    target_qualified_name: str
    target_node_id: str
    file_id: str
    line: int


@dataclass(frozen=True, slots=True)
class GraphDependency:
    """A module imported by a file; ``target_file_id`` is empty when the ast service could not
    tell which file of the project defines ``target_module``."""

    source_file_id: str
    target_module: str
    target_file_id: str
    line: int


@dataclass(frozen=True, slots=True)
class GraphFile:
    file_id: str
    relative_path: str
    module_name: str
    language: str = ""
    snapshot_id: str = ""


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """One files.parsed message (one part of a file) in domain terms."""

    project_id: str
    job_id: str
    snapshot_id: str
    snapshot_seq: int
    file_id: str
    sha256: str
    relative_path: str
    language: str
    change: ChangeKind
    module_name: str
    part_index: int = 0
    part_count: int = 1
    symbols: tuple[GraphSymbol, ...] = ()
    relations: tuple[GraphRelation, ...] = ()
    dependencies: tuple[GraphDependency, ...] = ()
    unsupported_language: bool = False

    @property
    def deleted(self) -> bool:
        return self.change == "deleted"


@dataclass(frozen=True, slots=True)
class ImpactQuery:
    """A validated impact query (see ``validate_query``)."""

    project_id: str
    seed_node_ids: tuple[str, ...]
    seed_file_ids: tuple[str, ...]
    depth: int
    stay_in_subsystem: bool
    limit: int
    without_signatures: bool = False
    """Walk definitions only: no signature, type alias or constant is reached, no
    ``overrides`` hop."""


@dataclass(frozen=True, slots=True)
class ImpactStep:
    """One hop of a reason chain. ``reverse`` walks the relation against its direction:
    a reverse ``calls`` step goes from a callee to its caller (called-by)."""

    relation: RelationKind
    reverse: bool
    from_node_id: str
    to_node_id: str

    @property
    def label(self) -> str:
        return relation_label(self.relation, self.reverse)


@dataclass(frozen=True, slots=True)
class ImpactedSymbol:
    symbol: GraphSymbol
    score: float
    distance: int
    reason: tuple[ImpactStep, ...]


@dataclass(frozen=True, slots=True)
class ImpactedFile:
    file: GraphFile
    score: float
    distance: int
    reason: tuple[ImpactStep, ...]


@dataclass(frozen=True, slots=True)
class ImpactResult:
    symbols: tuple[ImpactedSymbol, ...]
    files: tuple[ImpactedFile, ...]
    unknown_seed_node_ids: tuple[str, ...] = field(default=())
    unknown_seed_file_ids: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class FileReport:
    """What impact tells ingestion about one file of a scan job (index.updated, stage
    ``impact``): its parts are all in the graph, it was superseded or not supported (skipped),
    or it can never be applied (failed, with the reason)."""

    job_id: str
    project_id: str
    snapshot_id: str
    file_id: str
    sha256: str
    change: ChangeKind
    status: ReportStatus
    error: str = ""
