"""Mapping between locus.v1 protobufs and the gateway's domain types (the only place that does)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from locus.gateway.domain.access import Grant, Principal, Role
from locus.gateway.domain.api_keys import ApiKey
from locus.gateway.domain.context_selection import ContextChoice
from locus.gateway.domain.errors import InvalidRequest
from locus.gateway.domain.file_reading import FileExcerpt, NumberedLine, numbered_lines
from locus.gateway.domain.ranking_types import (
    ChunkMatch,
    Evidence,
    FileHistory,
    FileMatch,
    GraphNeighbor,
    PartHit,
    RankedSymbol,
    Ranking,
    SymbolRef,
)
from locus.gateway.domain.requests import (
    Artifact,
    ArtifactKind,
    Feedback,
    RequestDetails,
    StoredRequest,
)
from locus.gateway.domain.symbol_kinds import CALLABLE_KINDS
from locus.v1 import answer_pb2, common_pb2, gateway_pb2, impact_pb2, retrieval_pb2

_KIND_NAMES: dict[common_pb2.SymbolKind, str] = {
    cast(common_pb2.SymbolKind, value): name.removeprefix("SYMBOL_KIND_").lower()
    for name, value in common_pb2.SymbolKind.items()
    if value != common_pb2.SYMBOL_KIND_UNSPECIFIED
}
_KIND_VALUES = {name: value for value, name in _KIND_NAMES.items()}
CALLABLE_KIND_VALUES = sorted(_KIND_VALUES[name] for name in CALLABLE_KINDS)
_RELATION_NAMES = {
    common_pb2.RELATION_KIND_CONTAINS: "contains",
    common_pb2.RELATION_KIND_CALLS: "calls",
    common_pb2.RELATION_KIND_IMPORTS: "imports",
    common_pb2.RELATION_KIND_INHERITS: "inherits",
    common_pb2.RELATION_KIND_REFERENCES: "references",
    common_pb2.RELATION_KIND_OVERRIDES: "overrides",
}


def file_match(hit: Any) -> FileMatch:
    """A retrieval FileHit."""
    return FileMatch(
        file_id=hit.file_id,
        relative_path=hit.relative_path,
        language=hit.language,
        rank=hit.rank,
        score=hit.score,
        best_score=hit.best_score,
        chunks=hit.chunks,
    )


def file_history(item: Any) -> FileHistory:
    """An ingestion FileHistory."""
    return FileHistory(
        relative_path=item.relative_path,
        commits=item.commits,
        last_change=item.last_change,
        change_percentile=item.change_percentile,
        message_score=item.message_score,
    )


def symbol_ref(symbol: Any) -> SymbolRef:
    location = symbol.location
    return SymbolRef(
        node_id=symbol.node_id,
        name=symbol.name,
        qualified_name=symbol.qualified_name,
        scope_name=symbol.scope_name,
        kind=_KIND_NAMES.get(symbol.kind, ""),
        file_id=location.file_id,
        relative_path=location.relative_path,
        language=location.language,
        start_line=location.start_line,
        end_line=location.end_line,
    )


def graph_neighbors(seed_node_id: str, walked: Any) -> list[GraphNeighbor]:
    """The symbols impact reached from one seed (a SeedImpact), as one-hop neighbours."""
    return [
        GraphNeighbor(
            symbol=symbol_ref(impacted.symbol),
            seed_node_id=seed_node_id,
            relation=_RELATION_NAMES.get(impacted.reason[0].relation, ""),
            reverse=impacted.reason[0].reverse,
        )
        for impacted in walked.symbols
        if impacted.reason and impacted.symbol.node_id
    ]


def chunk_match(rank: int, hit: Any, enriched: Any | None) -> ChunkMatch:
    """A retrieval SearchHit and, when ast knows the chunk, its innermost symbol."""
    location = hit.chunk.location
    symbol = None
    if enriched is not None and enriched.HasField("symbol") and enriched.symbol.node_id:
        symbol = symbol_ref(enriched.symbol)
    return ChunkMatch(
        chunk_id=hit.chunk.chunk_id,
        file_id=location.file_id,
        relative_path=location.relative_path,
        language=location.language,
        start_line=location.start_line,
        end_line=location.end_line,
        rank=rank,
        score=hit.score,
        lexical_rank=hit.lexical_rank,
        vector_rank=hit.vector_rank,
        lexical_score=hit.lexical_score,
        vector_score=hit.vector_score,
        symbol=symbol,
    )


def part_hit(hit: Any) -> PartHit:
    """A retrieval SearchHit of a search by one part of the question (BM25 only)."""
    location = hit.chunk.location
    return PartHit(
        file_id=location.file_id,
        relative_path=location.relative_path,
        start_line=location.start_line,
        end_line=location.end_line,
        rank=hit.lexical_rank,
        score=hit.lexical_score,
    )


def symbol_message(ref: SymbolRef, known: Mapping[str, common_pb2.Symbol]) -> common_pb2.Symbol:
    """The Symbol as ast returned it, or one rebuilt from the reference."""
    if ref.node_id in known:
        return known[ref.node_id]
    return common_pb2.Symbol(
        node_id=ref.node_id,
        qualified_name=ref.qualified_name,
        scope_name=ref.scope_name,
        name=ref.name,
        kind=_KIND_VALUES.get(ref.kind, common_pb2.SYMBOL_KIND_UNSPECIFIED),
        location=common_pb2.CodeLocation(
            file_id=ref.file_id,
            relative_path=ref.relative_path,
            start_line=ref.start_line,
            end_line=ref.end_line,
            language=ref.language,
            node_id=ref.node_id,
        ),
    )


def evidence_messages(evidence: Sequence[Evidence]) -> list[Any]:
    return [
        gateway_pb2.Evidence(
            signal=e.signal, detail=e.detail, weight=round(e.weight, 4), chunk_id=e.chunk_id
        )
        for e in evidence
    ]


def located_symbol(ranked: RankedSymbol, known: Mapping[str, Any]) -> gateway_pb2.LocatedSymbol:
    return gateway_pb2.LocatedSymbol(
        symbol=symbol_message(ranked.symbol, known),
        score=round(ranked.score, 6),
        evidence=evidence_messages(ranked.evidence),
    )


def locate_response(
    request_id: str,
    ranking: Ranking,
    known_symbols: Mapping[str, Any],
    impact: Any | None,
    snapshot_id: str,
) -> Any:
    response = gateway_pb2.LocateResponse(
        request_id=request_id,
        snapshot_id=snapshot_id,
        symbols=[located_symbol(s, known_symbols) for s in ranking.symbols],
        files=[
            gateway_pb2.LocatedFile(
                file_id=f.file_id,
                relative_path=f.relative_path,
                language=f.language,
                score=round(f.score, 6),
                symbols=[located_symbol(s, known_symbols) for s in f.symbols],
                evidence=evidence_messages(f.evidence),
            )
            for f in ranking.files
        ],
    )
    response.impact.CopyFrom(impact if impact is not None else impact_pb2.ComputeImpactResponse())
    return response


def context_snippet(choice: ContextChoice, chunk: Any) -> answer_pb2.ContextSnippet:
    return answer_pb2.ContextSnippet(
        citation_id=choice.citation_id,
        chunk=chunk,
        symbol_qualified_name=choice.symbol.qualified_name if choice.symbol else "",
        symbol_kind=(
            _KIND_VALUES.get(choice.symbol.kind, common_pb2.SYMBOL_KIND_UNSPECIFIED)
            if choice.symbol
            else common_pb2.SYMBOL_KIND_UNSPECIFIED
        ),
        score=round(choice.score, 6),
        why=choice.why,
    )


def hit_artifact(ordinal: int, hit: Any) -> Artifact:
    """A retrieved chunk for the audit log; its text is left out (the chunk id and content hash
    identify it), the snippets actually sent to the answer service keep theirs."""
    stripped = type(hit)()
    stripped.CopyFrom(hit)
    stripped.chunk.text = ""
    location = hit.chunk.location
    return Artifact(
        kind=ArtifactKind.CHUNK,
        ordinal=ordinal,
        chunk_id=hit.chunk.chunk_id,
        relative_path=location.relative_path,
        start_line=location.start_line,
        end_line=location.end_line,
        score=hit.score,
        payload=stripped.SerializeToString(),
    )


def snippet_artifact(ordinal: int, snippet: Any) -> Artifact:
    location = snippet.chunk.location
    return Artifact(
        kind=ArtifactKind.CONTEXT,
        ordinal=ordinal,
        chunk_id=snippet.chunk.chunk_id,
        relative_path=location.relative_path,
        start_line=location.start_line,
        end_line=location.end_line,
        score=snippet.score,
        payload=snippet.SerializeToString(),
    )


def citation_artifact(ordinal: int, citation: Any) -> Artifact:
    return Artifact(
        kind=ArtifactKind.CITATION,
        ordinal=ordinal,
        chunk_id=citation.chunk_id,
        relative_path=citation.location.relative_path,
        start_line=citation.location.start_line,
        end_line=citation.location.end_line,
        payload=citation.SerializeToString(),
    )


def line_messages(lines: Sequence[NumberedLine]) -> list[Any]:
    return [gateway_pb2.NumberedLine(number=line.number, text=line.text) for line in lines]


def read_file_response(excerpt: FileExcerpt) -> gateway_pb2.ReadFileResponse:
    return gateway_pb2.ReadFileResponse(
        project_id=excerpt.project_id,
        snapshot_id=excerpt.snapshot_id,
        file_id=excerpt.file_id,
        relative_path=excerpt.relative_path,
        language=excerpt.language,
        sha256=excerpt.sha256,
        start_line=excerpt.start_line,
        end_line=excerpt.end_line,
        total_lines=excerpt.total_lines,
        lines=line_messages(excerpt.lines),
    )


def chunk_lines(chunk: Any) -> list[NumberedLine]:
    """A chunk's text as the file's lines, when it is exactly its lines start..end (a chunk
    that leaves lines out, such as a class without its methods, gives none)."""
    location = chunk.location
    lines = numbered_lines(chunk.text, location.start_line)
    if location.start_line < 1 or len(lines) != location.end_line - location.start_line + 1:
        return []
    return lines


def snippet_message(
    citation: Any, context: Any | None, lines: Sequence[NumberedLine], language: str = ""
) -> Any:
    """The Snippet event of a citation: where, which symbol, the numbered lines."""
    location = common_pb2.CodeLocation()
    location.CopyFrom(citation.location)
    if context is not None:
        chunk_location = context.chunk.location
        location.file_id = location.file_id or chunk_location.file_id
        location.language = location.language or chunk_location.language
        location.snapshot_id = location.snapshot_id or chunk_location.snapshot_id
    location.language = location.language or language
    if lines:
        location.start_line, location.end_line = lines[0].number, lines[-1].number
    return gateway_pb2.Snippet(
        citation_id=citation.citation_id,
        chunk_id=citation.chunk_id,
        location=location,
        symbol_qualified_name=context.symbol_qualified_name if context is not None else "",
        lines=line_messages(lines),
    )


def feedback_message(feedback: Feedback) -> gateway_pb2.FeedbackRecord:
    message = gateway_pb2.FeedbackRecord(
        feedback_id=feedback.feedback_id,
        request_id=feedback.request_id,
        rating=feedback.rating,
        comment=feedback.comment,
        project_id=feedback.project_id,
    )
    message.created_at.FromDatetime(feedback.created_at)
    return message


def request_details(details: RequestDetails) -> gateway_pb2.RequestRecord:
    """GetRequest's record: the request with every artifact the log keeps."""
    stored = details.request
    record = request_record(stored, details.of_kind(ArtifactKind.CITATION))
    record.retrieved.extend(
        retrieval_pb2.SearchHit.FromString(a.payload) for a in details.of_kind(ArtifactKind.CHUNK)
    )
    record.context.extend(
        answer_pb2.ContextSnippet.FromString(a.payload)
        for a in details.of_kind(ArtifactKind.CONTEXT)
    )
    record.feedback.extend(feedback_message(f) for f in details.feedback)
    record.timings_ms.update(stored.timings_ms)
    record.notes = stored.notes
    record.trace_id = stored.trace_id
    record.snapshot_id = stored.snapshot_id
    record.error_code = stored.error_code
    record.error_message = stored.error_message
    return record


def request_record(
    stored: StoredRequest, citations: Sequence[Artifact]
) -> gateway_pb2.RequestRecord:
    record = gateway_pb2.RequestRecord(
        request_id=stored.request_id,
        project_id=stored.project_id,
        project_name=stored.project_name,
        project_ref=stored.project_ref,
        kind=stored.kind.value,
        question=stored.question,
        status=stored.status.value,
        answer_text=stored.answer_text,
        citations=[answer_pb2.Citation.FromString(c.payload) for c in citations],
        latency_ms=stored.latency_ms,
        principal=stored.principal,
    )
    record.created_at.FromDatetime(stored.created_at)
    if stored.completed_at is not None:
        record.completed_at.FromDatetime(stored.completed_at)
    return record


def grants_of(messages: Sequence[Any]) -> list[Grant]:
    """gateway Grant messages; InvalidRequest for one without a project or a role."""
    grants = []
    for index, message in enumerate(messages):
        project = message.project.strip()
        if not project:
            raise InvalidRequest(f"grants[{index}].project must name a project (or be '*')")
        if message.role not in (Role.READER, Role.WRITER, Role.ADMIN):
            raise InvalidRequest(f"grants[{index}].role must be reader, writer or admin")
        grants.append(Grant(project, Role(message.role)))
    return grants


def grant_messages(grants: Sequence[Grant]) -> list[Any]:
    return [gateway_pb2.Grant(project=g.project, role=int(g.role)) for g in grants]  # type: ignore[arg-type]


def api_key_message(key: ApiKey) -> gateway_pb2.ApiKey:
    message = gateway_pb2.ApiKey(
        key_id=key.key_id,
        name=key.name,
        owner=key.owner,
        grants=grant_messages(key.grants),
        created_by=key.created_by,
    )
    message.created_at.FromDatetime(key.created_at)
    if key.expires_at is not None:
        message.expires_at.FromDatetime(key.expires_at)
    if key.revoked_at is not None:
        message.revoked_at.FromDatetime(key.revoked_at)
    return message


def who_am_i(principal: Principal) -> gateway_pb2.WhoAmIResponse:
    message = gateway_pb2.WhoAmIResponse(
        principal=principal.subject, name=principal.name, grants=grant_messages(principal.grants)
    )
    if principal.expires_at is not None:
        message.expires_at.FromDatetime(principal.expires_at)
    return message


# google.protobuf.Timestamp's valid range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
MIN_TIMESTAMP_SECONDS = -62_135_596_800
MAX_TIMESTAMP_SECONDS = 253_402_300_799


def optional_time(owner: Any, field: str) -> datetime | None:
    """An unset google.protobuf.Timestamp field is None, otherwise an aware UTC datetime;
    InvalidRequest for a timestamp outside what a Timestamp may hold (0001-01-01 to
    9999-12-31, nanos 0 to 999,999,999)."""
    if not owner.HasField(field):
        return None
    stamp = getattr(owner, field)
    if not (
        MIN_TIMESTAMP_SECONDS <= stamp.seconds <= MAX_TIMESTAMP_SECONDS
        and 0 <= stamp.nanos <= 999_999_999
    ):
        raise InvalidRequest(
            f"{field} is not a valid timestamp (seconds {stamp.seconds}, nanos {stamp.nanos}); "
            "use a time between 0001-01-01 and 9999-12-31 UTC"
        )
    moment: datetime = stamp.ToDatetime(tzinfo=UTC)
    return moment
