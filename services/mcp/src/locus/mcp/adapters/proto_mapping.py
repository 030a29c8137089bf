"""Gateway replies (protobuf) → the tools' results. The only place the MCP server maps
protobuf onto its own types."""

from __future__ import annotations

from collections.abc import Iterable

from locus.codepaths.relation_words import relation_label
from locus.mcp.domain import (
    Citation,
    FileLines,
    ImpactedFile,
    ImpactedSymbol,
    ImpactResult,
    LocatedFile,
    LocateResult,
    NumberedLine,
    ProjectImpact,
    ProjectSummary,
    QuestionScope,
    Relation,
    ScopeProject,
    SearchHit,
    Snippet,
    SymbolSummary,
)
from locus.v1 import (
    answer_pb2,
    common_pb2,
    gateway_pb2,
    impact_pb2,
    ingestion_pb2,
    retrieval_pb2,
)

SYMBOL_KIND_PREFIX = "SYMBOL_KIND_"
RELATION_KIND_PREFIX = "RELATION_KIND_"


def symbol_kind_name(kind: int) -> str:
    return common_pb2.SymbolKind.Name(kind).removeprefix(SYMBOL_KIND_PREFIX).lower()  # type: ignore[arg-type]


def symbol_kind_value(name: str) -> int:
    """``"function"`` → SYMBOL_KIND_FUNCTION; ``""`` → any kind. ValueError for an unknown one."""
    if not name.strip():
        return common_pb2.SYMBOL_KIND_UNSPECIFIED
    return int(common_pb2.SymbolKind.Value(SYMBOL_KIND_PREFIX + name.strip().upper()))


def symbol_kinds() -> list[str]:
    return [
        symbol_kind_name(value)
        for value in common_pb2.SymbolKind.values()
        if value != common_pb2.SYMBOL_KIND_UNSPECIFIED
    ]


def project_summary(project: ingestion_pb2.Project) -> ProjectSummary:
    return ProjectSummary(
        project_id=project.project_id,
        name=project.name,
        system=project.system,
        subsystem=project.subsystem,
        latest_snapshot_id=project.latest_snapshot_id,
    )


def symbol_summary(symbol: common_pb2.Symbol, score: float | None = None) -> SymbolSummary:
    return SymbolSummary(
        project_id=symbol.location.project_id,
        node_id=symbol.node_id,
        qualified_name=symbol.qualified_name,
        name=symbol.name,
        kind=symbol_kind_name(symbol.kind),
        path=symbol.location.relative_path,
        start_line=symbol.location.start_line,
        end_line=symbol.location.end_line,
        signature=symbol.signature,
        docstring=symbol.docstring,
        parent_qualified_name=symbol.parent_qualified_name,
        score=score,
    )


def _evidence(items: Iterable[gateway_pb2.Evidence]) -> list[str]:
    return [f"{item.signal}: {item.detail}" if item.detail else item.signal for item in items]


def scope_message(scope: QuestionScope | None) -> common_pb2.Scope | None:
    """A tool's scope as the gateway's Scope (None: not given)."""
    if scope is None:
        return None
    return common_pb2.Scope(projects=scope.projects, subsystem=scope.subsystem, system=scope.system)


def locate_result(reply: gateway_pb2.LocateResponse) -> LocateResult:
    return LocateResult(
        request_id=reply.request_id,
        snapshot_id=reply.snapshot_id,
        files=[
            LocatedFile(
                project_id=file.project_id,
                project=file.project_name,
                path=file.relative_path,
                language=file.language,
                score=file.score,
                symbols=[symbol_summary(s.symbol, s.score) for s in file.symbols],
                evidence=_evidence(file.evidence),
            )
            for file in reply.files
        ],
        symbols=[symbol_summary(s.symbol, s.score) for s in reply.symbols],
        projects=[
            ScopeProject(
                project_id=project.project_id,
                project=project.name,
                snapshot_id=project.snapshot_id,
                files=project.files,
                skipped=project.skipped,
            )
            for project in reply.projects
        ],
    )


def located_project_names(reply: gateway_pb2.LocateResponse) -> dict[str, str]:
    """id → name of the projects a scoped Locate names (none for a one-project Locate)."""
    names = {file.project_id: file.project_name for file in reply.files if file.project_name}
    names.update({project.project_id: project.name for project in reply.projects})
    return names


def impact_result(reply: gateway_pb2.LocateResponse) -> ImpactResult:
    """One entry per project: a scoped Locate's ``projects`` (each with the located symbols of
    that project), or the one project of a one-project Locate (labelled by the caller)."""
    if not reply.projects:
        return ImpactResult(
            request_id=reply.request_id,
            projects=[
                _project_impact(
                    reply.impact,
                    snapshot_id=reply.snapshot_id,
                    located=[symbol_summary(s.symbol, s.score) for s in reply.symbols],
                )
            ],
        )
    return ImpactResult(
        request_id=reply.request_id,
        projects=[
            _project_impact(
                project.impact,
                project_id=project.project_id,
                project=project.name,
                snapshot_id=project.snapshot_id,
                located=[
                    symbol_summary(s.symbol, s.score)
                    for s in reply.symbols
                    if s.symbol.location.project_id == project.project_id
                ],
                skipped=project.skipped,
            )
            for project in reply.projects
        ],
    )


def impact_step_label(step: impact_pb2.ImpactStep) -> str:
    """`calls` walked against its direction is `called-by`, `overrides` `overridden-by`."""
    relation = common_pb2.RelationKind.Name(step.relation)  # type: ignore[arg-type]
    name = relation.removeprefix(RELATION_KIND_PREFIX).lower()
    return relation_label(name, step.reverse)


def impacted_symbols(impact: impact_pb2.ComputeImpactResponse) -> list[ImpactedSymbol]:
    return [
        ImpactedSymbol(
            symbol=symbol_summary(s.symbol),
            distance=s.distance,
            score=s.score,
            via=[impact_step_label(step) for step in s.reason],
        )
        for s in impact.symbols
    ]


def impacted_files(impact: impact_pb2.ComputeImpactResponse) -> list[ImpactedFile]:
    return [
        ImpactedFile(path=f.relative_path, distance=f.distance, score=f.score) for f in impact.files
    ]


def _project_impact(
    impact: impact_pb2.ComputeImpactResponse,
    *,
    located: list[SymbolSummary],
    snapshot_id: str,
    project_id: str = "",
    project: str = "",
    skipped: str = "",
) -> ProjectImpact:
    return ProjectImpact(
        project_id=project_id,
        project=project,
        snapshot_id=snapshot_id,
        located=located,
        impacted_symbols=impacted_symbols(impact),
        impacted_files=impacted_files(impact),
        skipped=skipped,
    )


def search_hits(reply: retrieval_pb2.SearchResponse, max_text_chars: int) -> list[SearchHit]:
    return [
        SearchHit(
            project_id=hit.chunk.location.project_id,
            chunk_id=hit.chunk.chunk_id,
            file_id=hit.chunk.location.file_id,
            path=hit.chunk.location.relative_path,
            start_line=hit.chunk.location.start_line,
            end_line=hit.chunk.location.end_line,
            symbol_qualified_name=hit.chunk.symbol_qualified_name,
            symbol_node_id=hit.chunk.symbol_node_id,
            score=hit.score,
            lexical_rank=hit.lexical_rank,
            lexical_score=hit.lexical_score,
            vector_rank=hit.vector_rank,
            vector_score=hit.vector_score,
            text=hit.chunk.text[:max_text_chars],
        )
        for hit in reply.hits
    ]


def relation(item: common_pb2.Relation) -> Relation:
    kind = common_pb2.RelationKind.Name(item.kind).removeprefix(RELATION_KIND_PREFIX).lower()  # type: ignore[arg-type]
    return Relation(
        kind=kind,
        source_qualified_name=item.source_qualified_name,
        target_name=item.target_name,
        target_qualified_name=item.target_qualified_name,
        target_node_id=item.target_node_id,
        source_node_id=item.source_node_id,
        line=item.line,
    )


def file_lines(reply: gateway_pb2.ReadFileResponse, *, max_lines: int, max_chars: int) -> FileLines:
    """The lines read, cut at ``max_lines`` and ``max_chars`` (always at least one line)."""
    kept: list[NumberedLine] = []
    characters = 0
    for line in reply.lines:
        characters += len(line.text) + 1
        if kept and (len(kept) >= max_lines or characters > max_chars):
            break
        kept.append(NumberedLine(number=line.number, text=line.text))
    end_line = kept[-1].number if kept else reply.end_line
    return FileLines(
        project_id=reply.project_id,
        path=reply.relative_path,
        language=reply.language,
        snapshot_id=reply.snapshot_id,
        start_line=kept[0].number if kept else reply.start_line,
        end_line=end_line,
        total_lines=reply.total_lines,
        truncated=end_line < reply.end_line,
        lines=kept,
    )


def citation(item: answer_pb2.Citation) -> Citation:
    return Citation(
        project_id=item.location.project_id,
        citation_id=item.citation_id,
        path=item.location.relative_path,
        start_line=item.location.start_line,
        end_line=item.location.end_line,
        chunk_id=item.chunk_id,
    )


def snippet(item: gateway_pb2.Snippet) -> Snippet:
    return Snippet(
        project_id=item.location.project_id,
        citation_id=item.citation_id,
        path=item.location.relative_path,
        start_line=item.location.start_line,
        end_line=item.location.end_line,
        symbol_qualified_name=item.symbol_qualified_name,
        lines=[NumberedLine(number=line.number, text=line.text) for line in item.lines],
    )


def final_status_name(status: int) -> str:
    return answer_pb2.FinalStatus.Name(status).removeprefix("FINAL_STATUS_").lower()  # type: ignore[arg-type]
