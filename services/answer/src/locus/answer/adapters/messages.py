"""Mapping between locus.v1 answer messages and the answer domain (the only place that does it)."""

from __future__ import annotations

from locus.answer.domain import (
    AnswerEvent,
    AnswerFinal,
    AnswerProblem,
    AnswerRequest,
    AnswerText,
    CitedSnippet,
    Snippet,
    SnippetLocation,
    UsageReport,
)
from locus.v1 import answer_pb2, common_pb2

_SYMBOL_KINDS = {
    value: name.removeprefix("SYMBOL_KIND_").lower()
    for name, value in common_pb2.SymbolKind.items()
    if value != common_pb2.SYMBOL_KIND_UNSPECIFIED
}
_FINAL_STATUSES = {
    "finished": answer_pb2.FINAL_STATUS_FINISHED,
    "failed": answer_pb2.FINAL_STATUS_FAILED,
    "cancelled": answer_pb2.FINAL_STATUS_CANCELLED,
}


def answer_request_from_message(request: answer_pb2.GenerateRequest) -> AnswerRequest:
    snippets = []
    for item in request.context:
        location = item.chunk.location
        snippets.append(
            Snippet(
                citation_id=item.citation_id.strip(),
                chunk_id=item.chunk.chunk_id,
                text=item.chunk.text,
                location=SnippetLocation(
                    project_id=location.project_id,
                    snapshot_id=location.snapshot_id,
                    file_id=location.file_id,
                    relative_path=location.relative_path,
                    start_line=location.start_line,
                    end_line=location.end_line,
                    language=location.language,
                    node_id=location.node_id,
                ),
                symbol_qualified_name=(
                    item.symbol_qualified_name or item.chunk.symbol_qualified_name
                ),
                symbol_kind=_SYMBOL_KINDS.get(item.symbol_kind, ""),
                score=item.score,
                why=item.why,
            )
        )
    return AnswerRequest(
        request_id=request.request_id,
        question=request.question,
        snippets=tuple(snippets),
        max_tokens=request.max_tokens,
        min_relevance=request.min_relevance,
    )


def location_message(snippet: Snippet) -> common_pb2.CodeLocation:
    location = snippet.location
    return common_pb2.CodeLocation(
        project_id=location.project_id,
        snapshot_id=location.snapshot_id,
        file_id=location.file_id,
        relative_path=location.relative_path,
        start_line=location.start_line,
        end_line=location.end_line,
        language=location.language,
        node_id=location.node_id,
    )


def event_message(event: AnswerEvent) -> answer_pb2.GenerateEvent:
    if isinstance(event, AnswerText):
        return answer_pb2.GenerateEvent(text=answer_pb2.TextDelta(text=event.text))
    if isinstance(event, CitedSnippet):
        return answer_pb2.GenerateEvent(
            citation=answer_pb2.Citation(
                citation_id=event.snippet.citation_id,
                location=location_message(event.snippet),
                chunk_id=event.snippet.chunk_id,
            )
        )
    if isinstance(event, UsageReport):
        return answer_pb2.GenerateEvent(
            usage=answer_pb2.Usage(
                prompt_tokens=event.prompt_tokens,
                completion_tokens=event.completion_tokens,
                generator=event.generator,
                model=event.model,
            )
        )
    if isinstance(event, AnswerProblem):
        return answer_pb2.GenerateEvent(
            error=answer_pb2.GenerationError(code=event.code, message=event.message)
        )
    return final_message(event)


def final_message(event: AnswerFinal) -> answer_pb2.GenerateEvent:
    return answer_pb2.GenerateEvent(
        final=answer_pb2.Final(
            status=_FINAL_STATUSES[event.status], grounded=event.grounded, message=event.message
        )
    )
