"""What the MCP tools return: typed results an agent reads (their JSON schema is each tool's
output schema)."""

from locus.mcp.domain.projects import label_projects, labelled_items, unnamed_project_ids
from locus.mcp.domain.results import (
    AnswerResult,
    Citation,
    FileLines,
    FoundSymbols,
    ImpactedFile,
    ImpactedSymbol,
    ImpactResult,
    LocatedFile,
    LocateResult,
    NumberedLine,
    ProjectImpact,
    ProjectLabelled,
    ProjectList,
    ProjectSummary,
    Relation,
    SearchHit,
    SearchResult,
    Snippet,
    SymbolDetails,
    SymbolSummary,
)
from locus.mcp.domain.scopes import QuestionScope

__all__ = [
    "AnswerResult",
    "Citation",
    "FileLines",
    "FoundSymbols",
    "ImpactResult",
    "ImpactedFile",
    "ImpactedSymbol",
    "LocateResult",
    "LocatedFile",
    "NumberedLine",
    "ProjectImpact",
    "ProjectLabelled",
    "ProjectList",
    "ProjectSummary",
    "QuestionScope",
    "Relation",
    "SearchHit",
    "SearchResult",
    "Snippet",
    "SymbolDetails",
    "SymbolSummary",
    "label_projects",
    "labelled_items",
    "unnamed_project_ids",
]
