"""Mapping between locus.v1 messages and retrieval's domain types (the only place that does)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from locus.codepaths import VALUE_CLASSES
from locus.retrieval.domain.model import (
    ChunkDraft,
    FileChange,
    FileReport,
    FusedHit,
    IndexedChunk,
    ParsedPart,
    ReportStatus,
    SearchMode,
    VectorWork,
)
from locus.v1 import common_pb2, events_pb2, retrieval_pb2

_CHUNK_KIND_PREFIX = "CHUNK_KIND_"
_CHANGES = {
    common_pb2.CHANGE_TYPE_ADDED: FileChange.ADDED,
    common_pb2.CHANGE_TYPE_MODIFIED: FileChange.MODIFIED,
    common_pb2.CHANGE_TYPE_DELETED: FileChange.DELETED,
}
_CHANGE_TYPES = {change: value for value, change in _CHANGES.items()}
_STATUSES = {
    ReportStatus.INDEXED: events_pb2.INDEX_STATUS_INDEXED,
    ReportStatus.FAILED: events_pb2.INDEX_STATUS_FAILED,
    ReportStatus.SKIPPED: events_pb2.INDEX_STATUS_SKIPPED,
}
SEARCH_MODES = {
    retrieval_pb2.SEARCH_MODE_UNSPECIFIED: SearchMode.HYBRID,
    retrieval_pb2.SEARCH_MODE_HYBRID: SearchMode.HYBRID,
    retrieval_pb2.SEARCH_MODE_BM25: SearchMode.BM25,
    retrieval_pb2.SEARCH_MODE_VECTOR: SearchMode.VECTOR,
}
_SEARCH_MODE_VALUES = {
    SearchMode.HYBRID: retrieval_pb2.SEARCH_MODE_HYBRID,
    SearchMode.BM25: retrieval_pb2.SEARCH_MODE_BM25,
    SearchMode.VECTOR: retrieval_pb2.SEARCH_MODE_VECTOR,
}


class InvalidFilesParsed(ValueError):
    """A files.parsed message that can never be indexed."""


def chunk_kind_name(value: int) -> str:
    if value == common_pb2.CHUNK_KIND_UNSPECIFIED:
        return ""
    try:
        return common_pb2.ChunkKind.Name(value).removeprefix(_CHUNK_KIND_PREFIX).lower()
    except ValueError:
        return ""


def chunk_kind_value(name: str) -> int:
    if not name:
        return common_pb2.CHUNK_KIND_UNSPECIFIED
    try:
        return int(common_pb2.ChunkKind.Value(_CHUNK_KIND_PREFIX + name.upper()))
    except ValueError:
        return common_pb2.CHUNK_KIND_UNSPECIFIED


def parsed_part(event: events_pb2.FilesParsed) -> ParsedPart:
    """Validate and convert; raises InvalidFilesParsed naming the first problem."""
    file = event.file
    for name, value in (
        ("job_id", event.job_id),
        ("project_id", event.project_id),
        ("file.file_id", file.file_id),
    ):
        if not value:
            raise InvalidFilesParsed(f"files.parsed without {name}")
    change = _CHANGES.get(file.change_type)
    if change is None:
        raise InvalidFilesParsed(f"files.parsed with change_type {file.change_type}")
    if change is not FileChange.DELETED and not file.sha256:
        raise InvalidFilesParsed(f"files.parsed for {file.file_id} without file.sha256")
    if event.snapshot_seq < 0:
        raise InvalidFilesParsed(f"files.parsed with negative snapshot_seq {event.snapshot_seq}")
    part_count = event.part_count or 1
    if not 0 <= event.part_index < part_count:
        raise InvalidFilesParsed(
            f"files.parsed part_index {event.part_index} outside 0..{part_count - 1}"
        )
    drafts: list[ChunkDraft] = []
    for chunk in event.chunks:
        if not chunk.chunk_id:
            raise InvalidFilesParsed(f"a chunk of {file.file_id} has no chunk_id")
        location = chunk.location
        if location.start_line < 1 or location.end_line < location.start_line:
            raise InvalidFilesParsed(
                f"chunk {chunk.chunk_id} has lines {location.start_line}..{location.end_line}"
            )
        drafts.append(
            ChunkDraft(
                chunk_id=chunk.chunk_id,
                start_line=location.start_line,
                end_line=location.end_line,
                node_id=location.node_id,
                kind=chunk_kind_name(chunk.kind),
                symbol_node_id=chunk.symbol_node_id,
                symbol_qualified_name=chunk.symbol_qualified_name,
                text=chunk.text,
                content_sha256=chunk.content_sha256
                or hashlib.sha256(chunk.text.encode()).hexdigest(),
                ordinal=chunk.ordinal,
            )
        )
    return ParsedPart(
        job_id=event.job_id,
        project_id=event.project_id,
        snapshot_id=event.snapshot_id,
        snapshot_seq=event.snapshot_seq,
        file_id=file.file_id,
        path=file.relative_path,
        language=file.language.lower(),
        sha256=file.sha256,
        change=change,
        part_index=event.part_index,
        part_count=part_count,
        chunks=tuple(drafts),
    )


def index_updated(reports: Sequence[FileReport]) -> list[events_pb2.IndexUpdated]:
    """One index.updated per (job, stage) of ``reports``, in the order they first appear."""
    events: dict[tuple[str, str], events_pb2.IndexUpdated] = {}
    for report in reports:
        key = (report.job_id, report.stage)
        event = events.get(key)
        if event is None:
            event = events[key] = events_pb2.IndexUpdated(
                job_id=report.job_id,
                project_id=report.project_id,
                snapshot_id=report.snapshot_id,
                stage=report.stage,
            )
        event.files.append(
            events_pb2.IndexedFile(
                file_id=report.file_id,
                sha256=report.sha256,
                change_type=_CHANGE_TYPES[report.change],
                status=_STATUSES[report.status],
                error=report.error[:2000],
            )
        )
    return list(events.values())


def files_parsed(part: ParsedPart) -> events_pb2.FilesParsed:
    """The part's file and chunks as files.parsed carries them (no symbols or relations)."""
    return events_pb2.FilesParsed(
        job_id=part.job_id,
        project_id=part.project_id,
        snapshot_id=part.snapshot_id,
        snapshot_seq=part.snapshot_seq,
        file=events_pb2.ChangedFile(
            file_id=part.file_id,
            relative_path=part.path,
            change_type=_CHANGE_TYPES[part.change],
            sha256=part.sha256,
            language=part.language,
        ),
        part_index=part.part_index,
        part_count=part.part_count,
        chunks=[chunk_message(part.placed(draft, subsystem="")) for draft in part.chunks],
    )


def vectors_requested(work: VectorWork) -> events_pb2.VectorsRequested:
    return events_pb2.VectorsRequested(
        part=files_parsed(work.part), subsystem=work.subsystem, value_class=work.value_class
    )


def vector_work(event: events_pb2.VectorsRequested) -> VectorWork:
    """Validate and convert; raises InvalidFilesParsed naming the first problem."""
    part = parsed_part(event.part)
    if part.deleted:
        raise InvalidFilesParsed(f"vectors.requested for the deleted file {part.file_id}")
    if event.value_class not in VALUE_CLASSES:
        raise InvalidFilesParsed(f"vectors.requested with value class {event.value_class!r}")
    return VectorWork(part, event.subsystem, event.value_class)


def chunk_message(chunk: IndexedChunk) -> common_pb2.Chunk:
    return common_pb2.Chunk(
        chunk_id=chunk.chunk_id,
        location=common_pb2.CodeLocation(
            project_id=chunk.project_id,
            snapshot_id=chunk.snapshot_id,
            file_id=chunk.file_id,
            relative_path=chunk.path,
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            language=chunk.language,
            node_id=chunk.node_id,
        ),
        kind=chunk_kind_value(chunk.kind),  # type: ignore[arg-type]
        symbol_node_id=chunk.symbol_node_id,
        symbol_qualified_name=chunk.symbol_qualified_name,
        text=chunk.text,
        content_sha256=chunk.content_sha256,
        ordinal=chunk.ordinal,
    )


def search_hit(hit: FusedHit) -> retrieval_pb2.SearchHit:
    chunk = hit.chunk
    return retrieval_pb2.SearchHit(
        chunk=chunk_message(chunk),
        score=hit.score,
        lexical_rank=hit.lexical_rank,
        vector_rank=hit.vector_rank,
        lexical_score=hit.lexical_score,
        vector_score=hit.vector_score,
    )


def search_mode_value(mode: SearchMode) -> int:
    return int(_SEARCH_MODE_VALUES[mode])
