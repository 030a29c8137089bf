"""``--json`` output: protobuf replies as plain dicts with stable snake_case keys. Every key is
always present (empty string, 0 or [] when unset) so scripts can rely on the shape; enum values
are lower-case names without their prefix ("function", "completed")."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from locus.v1 import (
    answer_pb2,
    ast_pb2,
    common_pb2,
    events_pb2,
    gateway_pb2,
    impact_pb2,
    ingestion_pb2,
    retrieval_pb2,
)

JsonObject = dict[str, Any]


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def enum_label(enum_name: str, prefix: str) -> str:
    """``SYMBOL_KIND_FUNCTION`` → ``function``."""
    return enum_name.removeprefix(prefix).lower()


def timestamp_text(message: Message, field: str) -> str:
    """ISO 8601 (UTC) of a Timestamp field, or "" when it is unset."""
    if not message.HasField(field):
        return ""
    stamp: Timestamp = getattr(message, field)
    return stamp.ToDatetime().isoformat(timespec="milliseconds") + "Z"


def timestamp_datetime(message: Message, field: str) -> datetime | None:
    if not message.HasField(field):
        return None
    stamp: Timestamp = getattr(message, field)
    return stamp.ToDatetime()


def line_span(path: str, start_line: int, end_line: int) -> str:
    """``path:start-end`` (``path:start`` for one line): what terminals and editors open."""
    if not start_line:
        return path
    if end_line and end_line != start_line:
        return f"{path}:{start_line}-{end_line}"
    return f"{path}:{start_line}"


def project_json(project: ingestion_pb2.Project) -> JsonObject:
    return {
        "project_id": project.project_id,
        "name": project.name,
        "system": project.system,
        "subsystem": project.subsystem,
        "created_at": timestamp_text(project, "created_at"),
        "latest_snapshot_id": project.latest_snapshot_id,
    }


def source_json(source: ingestion_pb2.Source) -> JsonObject:
    return {
        "source_id": source.source_id,
        "project_id": source.project_id,
        "kind": enum_label(ingestion_pb2.SourceKind.Name(source.kind), "SOURCE_KIND_"),
        "path": source.path,
        "git_url": source.git_url,
        "git_ref": source.git_ref,
        "credential_file": source.credential_file,
        "credential_env": source.credential_env,
        "poll_seconds": source.poll_seconds,
        "last_commit_sha": source.last_commit_sha,
        "created_at": timestamp_text(source, "created_at"),
    }


def scan_elapsed_seconds(job: ingestion_pb2.ScanJob, fallback: float) -> float:
    """Server-side duration of a finished job; ``fallback`` (client-measured) otherwise."""
    created = timestamp_datetime(job, "created_at")
    completed = timestamp_datetime(job, "completed_at")
    if created is None or completed is None or completed < created:
        return fallback
    return (completed - created).total_seconds()


def scan_json(job: ingestion_pb2.ScanJob, elapsed_seconds: float | None = None) -> JsonObject:
    stats = job.stats
    data: JsonObject = {
        "job_id": job.job_id,
        "project_id": job.project_id,
        "snapshot_id": job.snapshot_id,
        "state": enum_label(ingestion_pb2.ScanState.Name(job.state), "SCAN_STATE_"),
        "error": job.error,
        "created_at": timestamp_text(job, "created_at"),
        "completed_at": timestamp_text(job, "completed_at"),
        "pending_stages": list(job.pending_stages),
        "level": enum_label(events_pb2.ScanLevel.Name(job.level), "SCAN_LEVEL_"),
        "without_vectors": job.without_vectors,
        "stats": {
            "files_seen": stats.files_seen,
            "files_skipped": stats.files_skipped,
            "files_added": stats.files_added,
            "files_modified": stats.files_modified,
            "files_deleted": stats.files_deleted,
            "files_unchanged": stats.files_unchanged,
            "bytes_read": stats.bytes_read,
            "files_parsed": stats.files_parsed,
            "files_indexed": stats.files_indexed,
            "files_failed": stats.files_failed,
            "files_embedded": stats.files_embedded,
            "files_embedding_failed": stats.files_embedding_failed,
        },
    }
    if elapsed_seconds is not None:
        data["elapsed_seconds"] = round(elapsed_seconds, 3)
        data["files_per_second"] = round(throughput(stats.files_seen, elapsed_seconds), 1)
        data["megabytes_per_second"] = round(
            throughput(stats.bytes_read / 1_000_000, elapsed_seconds), 3
        )
    return data


def throughput(amount: float, seconds: float) -> float:
    return amount / seconds if seconds > 0 else 0.0


def symbol_json(symbol: common_pb2.Symbol) -> JsonObject:
    location = symbol.location
    return {
        "node_id": symbol.node_id,
        "name": symbol.name,
        "qualified_name": symbol.qualified_name,
        "scope_name": symbol.scope_name,
        "kind": enum_label(common_pb2.SymbolKind.Name(symbol.kind), "SYMBOL_KIND_"),
        "path": location.relative_path,
        "start_line": location.start_line,
        "end_line": location.end_line,
        "location": line_span(location.relative_path, location.start_line, location.end_line),
        "language": location.language,
        "file_id": location.file_id,
        "snapshot_id": location.snapshot_id,
        "signature": symbol.signature,
        "docstring": symbol.docstring,
        "parent_qualified_name": symbol.parent_qualified_name,
    }


def evidence_json(evidence: gateway_pb2.Evidence) -> JsonObject:
    return {
        "signal": evidence.signal,
        "detail": evidence.detail,
        "weight": evidence.weight,
        "chunk_id": evidence.chunk_id,
    }


def located_symbol_json(located: gateway_pb2.LocatedSymbol) -> JsonObject:
    return {
        **symbol_json(located.symbol),
        "score": located.score,
        "evidence": [evidence_json(e) for e in located.evidence],
    }


def impact_step_json(step: impact_pb2.ImpactStep) -> JsonObject:
    """One hop of the chain from a seed: the relation and whether it was walked against its
    direction (`calls` reversed = called by; `overrides` reversed = overridden by)."""
    return {
        "relation": enum_label(common_pb2.RelationKind.Name(step.relation), "RELATION_KIND_"),
        "reverse": step.reverse,
    }


def impact_json(impact: impact_pb2.ComputeImpactResponse) -> JsonObject:
    return {
        "symbols": [
            {
                **symbol_json(s.symbol),
                "score": s.score,
                "distance": s.distance,
                "reason": [impact_step_json(step) for step in s.reason],
            }
            for s in impact.symbols
        ],
        "files": [
            {
                "file_id": f.file_id,
                "path": f.relative_path,
                "score": f.score,
                "distance": f.distance,
            }
            for f in impact.files
        ],
    }


def locate_json(reply: gateway_pb2.LocateResponse) -> JsonObject:
    return {
        "request_id": reply.request_id,
        "snapshot_id": reply.snapshot_id,
        "files": [
            {
                "file_id": f.file_id,
                "path": f.relative_path,
                "language": f.language,
                "score": f.score,
                "project_id": f.project_id,
                "project_name": f.project_name,
                "evidence": [evidence_json(e) for e in f.evidence],
                "symbols": [located_symbol_json(s) for s in f.symbols],
            }
            for f in reply.files
        ],
        "symbols": [located_symbol_json(s) for s in reply.symbols],
        "impact": impact_json(reply.impact),
    }


def citation_json(citation: answer_pb2.Citation) -> JsonObject:
    location = citation.location
    return {
        "citation_id": citation.citation_id,
        "chunk_id": citation.chunk_id,
        "path": location.relative_path,
        "start_line": location.start_line,
        "end_line": location.end_line,
        "location": line_span(location.relative_path, location.start_line, location.end_line),
    }


def request_json(record: gateway_pb2.RequestRecord) -> JsonObject:
    return {
        "request_id": record.request_id,
        "project_id": record.project_id,
        "project_name": record.project_name,
        "project_ref": record.project_ref,
        "kind": record.kind,
        "question": record.question,
        "status": record.status,
        "created_at": timestamp_text(record, "created_at"),
        "completed_at": timestamp_text(record, "completed_at"),
        "latency_ms": record.latency_ms,
        "answer_text": record.answer_text,
        "citations": [citation_json(c) for c in record.citations],
    }


def lines_json(lines: Any) -> list[JsonObject]:
    return [{"number": line.number, "text": line.text} for line in lines]


def read_file_json(reply: gateway_pb2.ReadFileResponse) -> JsonObject:
    return {
        "project_id": reply.project_id,
        "snapshot_id": reply.snapshot_id,
        "file_id": reply.file_id,
        "path": reply.relative_path,
        "language": reply.language,
        "sha256": reply.sha256,
        "start_line": reply.start_line,
        "end_line": reply.end_line,
        "total_lines": reply.total_lines,
        "lines": lines_json(reply.lines),
    }


def outline_json(path: str, reply: ast_pb2.GetFileOutlineResponse) -> JsonObject:
    return {
        "path": path,
        "parse_errors": reply.parse_errors,
        "symbols": [symbol_json(s) for s in reply.symbols],
        "dependencies": [
            {
                "target_module": d.target_module,
                "target_file_id": d.target_file_id,
                "line": d.line,
            }
            for d in reply.dependencies
        ],
    }


def snippet_json(snippet: gateway_pb2.Snippet) -> JsonObject:
    location = snippet.location
    return {
        "citation_id": snippet.citation_id,
        "chunk_id": snippet.chunk_id,
        "path": location.relative_path,
        "start_line": location.start_line,
        "end_line": location.end_line,
        "language": location.language,
        "symbol": snippet.symbol_qualified_name,
        "lines": lines_json(snippet.lines),
    }


def feedback_json(feedback: gateway_pb2.FeedbackRecord) -> JsonObject:
    return {
        "feedback_id": feedback.feedback_id,
        "request_id": feedback.request_id,
        "project_id": feedback.project_id,
        "rating": feedback.rating,
        "comment": feedback.comment,
        "created_at": timestamp_text(feedback, "created_at"),
    }


def request_detail_json(record: gateway_pb2.RequestRecord) -> JsonObject:
    """``locus request show``: the record with every artifact the request log keeps."""
    return {
        **request_json(record),
        "principal": record.principal,
        "trace_id": record.trace_id,
        "snapshot_id": record.snapshot_id,
        "error_code": record.error_code,
        "error_message": record.error_message,
        "notes": record.notes,
        "timings_ms": dict(sorted(record.timings_ms.items())),
        "retrieved": [
            {
                "chunk_id": hit.chunk.chunk_id,
                "path": hit.chunk.location.relative_path,
                "start_line": hit.chunk.location.start_line,
                "end_line": hit.chunk.location.end_line,
                "score": hit.score,
            }
            for hit in record.retrieved
        ],
        "context": [
            {
                "citation_id": c.citation_id,
                "chunk_id": c.chunk.chunk_id,
                "path": c.chunk.location.relative_path,
                "start_line": c.chunk.location.start_line,
                "end_line": c.chunk.location.end_line,
                "symbol": c.symbol_qualified_name,
                "score": c.score,
                "why": c.why,
                "text": c.chunk.text,
            }
            for c in record.context
        ],
        "feedback": [feedback_json(f) for f in record.feedback],
    }


def search_hit_json(hit: retrieval_pb2.SearchHit) -> JsonObject:
    chunk = hit.chunk
    location = chunk.location
    return {
        "chunk_id": chunk.chunk_id,
        "path": location.relative_path,
        "start_line": location.start_line,
        "end_line": location.end_line,
        "location": line_span(location.relative_path, location.start_line, location.end_line),
        "language": location.language,
        "file_id": location.file_id,
        "snapshot_id": location.snapshot_id,
        "kind": enum_label(common_pb2.ChunkKind.Name(chunk.kind), "CHUNK_KIND_"),
        "symbol": chunk.symbol_qualified_name,
        "symbol_node_id": chunk.symbol_node_id,
        "score": hit.score,
        "lexical_rank": hit.lexical_rank,
        "vector_rank": hit.vector_rank,
        "lexical_score": hit.lexical_score,
        "vector_score": hit.vector_score,
        "text": chunk.text,
    }


def search_json(
    project: str, query: str, request_id: str, reply: retrieval_pb2.SearchResponse
) -> JsonObject:
    """``locus search``: the hits best first; ``request_id`` names the search in the request
    log (``locus request show``)."""
    return {
        "project": project,
        "query": query,
        "request_id": request_id,
        "mode": enum_label(retrieval_pb2.SearchMode.Name(reply.mode), "SEARCH_MODE_"),
        "hits": [search_hit_json(hit) for hit in reply.hits],
    }


def relation_json(relation: common_pb2.Relation) -> JsonObject:
    return {
        "kind": enum_label(common_pb2.RelationKind.Name(relation.kind), "RELATION_KIND_"),
        "source_node_id": relation.source_node_id,
        "source_qualified_name": relation.source_qualified_name,
        "target_name": relation.target_name,
        "target_qualified_name": relation.target_qualified_name,
        "target_node_id": relation.target_node_id,
        "line": relation.line,
        "file_id": relation.file_id,
    }


def node_json(reply: ast_pb2.GetNodeResponse) -> JsonObject:
    """``locus node``: the symbol, its children and (with --relations) its edges."""
    return {
        "symbol": symbol_json(reply.symbol),
        "children": [symbol_json(child) for child in reply.children],
        "outgoing": [relation_json(relation) for relation in reply.outgoing],
        "incoming": [relation_json(relation) for relation in reply.incoming],
    }
