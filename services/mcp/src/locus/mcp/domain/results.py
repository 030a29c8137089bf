"""The tools' structured results. Plain pydantic models (no protobuf): the adapters map the
gateway's replies onto them, and MCP publishes their JSON schema as each tool's output schema.
Every item that comes from a project's code is ProjectLabelled: it names its project."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ProjectSummary(BaseModel):
    project_id: str
    name: str
    system: str = ""
    subsystem: str = ""
    latest_snapshot_id: str = Field(default="", description="empty until a scan completed")


class ProjectList(BaseModel):
    projects: list[ProjectSummary]


class ProjectLabelled(BaseModel):
    """An item of one project's code, labelled with that project (scoped calls mix projects)."""

    project_id: str = Field(default="", description="the id of the project it comes from")
    project: str = Field(default="", description="that project's name")


class SymbolSummary(ProjectLabelled):
    node_id: str = Field(description="pass to get_symbol")
    qualified_name: str
    name: str
    kind: str = Field(description="module, class, function, method, ...")
    path: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    parent_qualified_name: str = ""
    score: float | None = Field(default=None, description="ranking score, when ranked")


class LocatedFile(ProjectLabelled):
    path: str
    language: str
    score: float
    symbols: list[SymbolSummary]
    evidence: list[str] = Field(description="why the file was ranked: signal and detail")


class ImpactedSymbol(BaseModel):
    symbol: SymbolSummary
    distance: int = Field(description="hops from the located symbols")
    score: float
    via: list[str] = Field(
        default_factory=list,
        description="the relations walked from a located symbol to this one, in order "
        "(`called-by`, `calls`, `overrides`, `overridden-by`, `inherited-by`, `contained-in`, ...)",
    )


class ImpactedFile(BaseModel):
    path: str
    distance: int
    score: float


class ScopeProject(ProjectLabelled):
    """One project of a scoped call: how many of the files are its own, or why it has none."""

    snapshot_id: str = ""
    files: int = 0
    skipped: str = Field(
        default="", description="why nothing was located in it (e.g. not scanned yet)"
    )


class LocateResult(BaseModel):
    request_id: str = Field(description="the gateway's request id (locus request <id>)")
    snapshot_id: str
    files: list[LocatedFile]
    symbols: list[SymbolSummary]
    projects: list[ScopeProject] = Field(
        default_factory=list,
        description="a scoped call only: each project of the scope, skipped ones included",
    )


class ProjectImpact(ProjectLabelled):
    """What a change could affect in one project, walked from that project's located symbols
    alone (the impact never crosses projects)."""

    snapshot_id: str
    located: list[SymbolSummary] = Field(description="the symbols the question points at")
    impacted_symbols: list[ImpactedSymbol]
    impacted_files: list[ImpactedFile]
    skipped: str = Field(
        default="", description="why nothing was located in it (e.g. not scanned yet)"
    )


class ImpactResult(BaseModel):
    request_id: str
    projects: list[ProjectImpact] = Field(
        description="one entry per project asked (the project, or each project of the scope)"
    )


class SearchHit(ProjectLabelled):
    chunk_id: str
    file_id: str = Field(default="", description="pass to read_file")
    path: str
    start_line: int
    end_line: int
    symbol_qualified_name: str = ""
    symbol_node_id: str = Field(default="", description="pass to get_symbol, symbol_impact")
    score: float = Field(description="the hit's place in the fused ranking (higher first)")
    lexical_rank: int = Field(default=0, description="1 = best by BM25; 0 = not in that list")
    lexical_score: float = Field(default=0.0, description="its BM25 score")
    vector_rank: int = Field(default=0, description="1 = nearest by vectors; 0 = not in it")
    vector_score: float = Field(default=0.0, description="its vector similarity")
    text: str


class SearchResult(BaseModel):
    request_id: str = Field(description="the request id the search was sent under")
    mode: str = Field(description="what answered: bm25, vector or hybrid")
    hits: list[SearchHit]
    note: str = Field(default="", description="why there are no hits, when it is known")


class FoundSymbols(BaseModel):
    symbols: list[SymbolSummary]
    next_page_token: str = ""


class Relation(BaseModel):
    kind: str = Field(description="calls, imports, inherits, references, contains")
    source_qualified_name: str
    target_name: str
    target_qualified_name: str = ""
    target_node_id: str = Field(default="", description="empty when unresolved")
    source_node_id: str = ""
    line: int = 0


class SymbolDetails(BaseModel):
    symbol: SymbolSummary
    parents: list[SymbolSummary] = Field(description="enclosing symbols, innermost first")
    children: list[SymbolSummary]
    outgoing: list[Relation] = Field(description="this symbol → others")
    incoming: list[Relation] = Field(description="others → this symbol")
    truncated: bool = Field(default=False, description="children or relations were cut")


class SymbolImpact(BaseModel):
    """What a change to one symbol could affect in its project, nearest first."""

    symbol: SymbolSummary = Field(description="the symbol walked from")
    impacted_symbols: list[ImpactedSymbol] = Field(
        description="its callers, callees and dependents, by distance"
    )
    impacted_files: list[ImpactedFile]


class NumberedLine(BaseModel):
    number: int
    text: str


class FileLines(ProjectLabelled):
    path: str
    language: str
    snapshot_id: str
    start_line: int
    end_line: int
    total_lines: int
    truncated: bool = Field(description="fewer lines than asked (size cap): read on from end_line")
    lines: list[NumberedLine]


class Citation(ProjectLabelled):
    citation_id: str
    path: str
    start_line: int
    end_line: int
    chunk_id: str = ""


class Snippet(ProjectLabelled):
    citation_id: str
    path: str
    start_line: int
    end_line: int
    symbol_qualified_name: str = ""
    lines: list[NumberedLine]


class AnswerResult(BaseModel):
    request_id: str
    answer: str = Field(description="the answer text; [Cn] marks cite the citations")
    grounded: bool = Field(description="every claim is backed by a cited snippet")
    status: str = Field(description="finished, failed or cancelled")
    message: str = ""
    citations: list[Citation]
    snippets: list[Snippet]
    errors: list[str] = Field(default_factory=list)
