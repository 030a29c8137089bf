"""Pure domain of the impact service: the code graph of a project, how files.parsed events
update it, and the impact walk over it. No grpc, nats, protobuf or SQL here."""

from locus.impact.domain.errors import (
    ImpactError,
    InvalidImpactQuery,
    InvalidParsedFile,
    SeedsNotFound,
)
from locus.impact.domain.graph import CodeGraph, build_graph, subsystem_for
from locus.impact.domain.model import (
    FileReport,
    GraphDependency,
    GraphFile,
    GraphRelation,
    GraphSymbol,
    ImpactedFile,
    ImpactedSymbol,
    ImpactQuery,
    ImpactResult,
    ImpactStep,
    ParsedFile,
    RelationKind,
    ReportStatus,
    SymbolKind,
)
from locus.impact.domain.ports import IndexReporter
from locus.impact.domain.traversal import (
    EDGE_WEIGHTS,
    MAX_EACH_SEEDS,
    SeedResult,
    compute_each_seed,
    compute_impact,
    validate_query,
)
from locus.impact.domain.versions import (
    HeldVersion,
    UpdateDecision,
    check_parsed_file,
    decide_update,
    is_complete,
)

__all__ = [
    "EDGE_WEIGHTS",
    "MAX_EACH_SEEDS",
    "CodeGraph",
    "FileReport",
    "GraphDependency",
    "GraphFile",
    "GraphRelation",
    "GraphSymbol",
    "HeldVersion",
    "ImpactError",
    "ImpactQuery",
    "ImpactResult",
    "ImpactStep",
    "ImpactedFile",
    "ImpactedSymbol",
    "IndexReporter",
    "InvalidImpactQuery",
    "InvalidParsedFile",
    "ParsedFile",
    "RelationKind",
    "ReportStatus",
    "SeedResult",
    "SeedsNotFound",
    "SymbolKind",
    "UpdateDecision",
    "build_graph",
    "check_parsed_file",
    "compute_each_seed",
    "compute_impact",
    "decide_update",
    "is_complete",
    "subsystem_for",
    "validate_query",
]
