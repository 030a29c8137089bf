"""Plain data of the retrieval domain: indexed chunks, filters, scored and fused hits."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, TypeVar

FileKey = TypeVar("FileKey", bound=Hashable)
_LAST_NAME = re.compile(r"\w+$")


class SearchMode(Enum):
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"

    @property
    def uses_lexical(self) -> bool:
        return self in (SearchMode.BM25, SearchMode.HYBRID)

    @property
    def uses_vectors(self) -> bool:
        return self in (SearchMode.VECTOR, SearchMode.HYBRID)


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """A chunk as both indexes store it: its text, where it lives and what it belongs to.

    ``snapshot_seq`` is the project's scan number that last (re)indexed the file; a chunk stays
    valid in later snapshots until its file changes or is deleted. Lines are 1-based, inclusive.
    """

    chunk_id: str
    project_id: str
    snapshot_id: str
    snapshot_seq: int
    file_id: str
    path: str
    language: str
    subsystem: str
    start_line: int
    end_line: int
    node_id: str
    kind: str
    symbol_node_id: str
    symbol_qualified_name: str
    text: str
    content_sha256: str
    ordinal: int

    @property
    def symbol_name(self) -> str:
        """The last component of the qualified name: ``pkg.mod.Class.method`` → ``method``."""
        match = _LAST_NAME.search(self.symbol_qualified_name)
        return match.group() if match else ""

    def to_payload(self) -> dict[str, Any]:
        """Flat JSON-ready fields, the form every store keeps beside the index (every field is
        a str or an int, so no deep copy: ``dataclasses.asdict`` was a fifth of BM25 indexing)."""
        return {name: getattr(self, name) for name in _CHUNK_FIELDS}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> IndexedChunk:
        if type(payload) is dict and payload.keys() == _CHUNK_FIELD_SET:
            # What `to_payload` wrote, every field present: as is (a search reads up to
            # thousands of payloads to rank files; converting each field cost a third of it).
            return cls(**payload)
        return cls(
            chunk_id=str(payload["chunk_id"]),
            project_id=str(payload["project_id"]),
            snapshot_id=str(payload.get("snapshot_id", "")),
            snapshot_seq=int(payload.get("snapshot_seq", 0)),
            file_id=str(payload["file_id"]),
            path=str(payload.get("path", "")),
            language=str(payload.get("language", "")),
            subsystem=str(payload.get("subsystem", "")),
            start_line=int(payload.get("start_line", 0)),
            end_line=int(payload.get("end_line", 0)),
            node_id=str(payload.get("node_id", "")),
            kind=str(payload.get("kind", "")),
            symbol_node_id=str(payload.get("symbol_node_id", "")),
            symbol_qualified_name=str(payload.get("symbol_qualified_name", "")),
            text=str(payload.get("text", "")),
            content_sha256=str(payload.get("content_sha256", "")),
            ordinal=int(payload.get("ordinal", 0)),
        )


_CHUNK_FIELDS = tuple(field.name for field in fields(IndexedChunk))
_CHUNK_FIELD_SET = frozenset(_CHUNK_FIELDS)


@dataclass(frozen=True, slots=True)
class WholeFile:
    """One document per file for the whole-file lexical list: its path and the text of all its
    chunks. A question whose words are spread over a file (one in a docstring, one in a helper,
    one in the class) matches the file even when no chunk holds them together."""

    file_id: str
    project_id: str
    snapshot_id: str
    snapshot_seq: int
    path: str
    language: str
    subsystem: str
    text: str
    chunks: int


def whole_file(chunks: Sequence[IndexedChunk]) -> WholeFile:
    """The document of a file from every chunk of its current version (in any order; the
    chunks of one version partition its lines, so their texts together are the file's)."""
    if not chunks:
        raise ValueError("a whole-file document needs at least one chunk")
    ordered = sorted(chunks, key=lambda c: (c.ordinal, c.start_line))
    first = ordered[0]
    return WholeFile(
        file_id=first.file_id,
        project_id=first.project_id,
        snapshot_id=first.snapshot_id,
        snapshot_seq=max(c.snapshot_seq for c in ordered),
        path=first.path,
        language=first.language,
        subsystem=first.subsystem,
        text="\n".join(c.text for c in ordered),
        chunks=len(ordered),
    )


def ranked_whole_files(found: Iterable[tuple[float, Mapping[str, Any]]]) -> list[FileHit]:
    """Whole-file documents a search found, as (score, stored fields: file_id, path, language,
    chunks), ranked 1..n best first, equal scores in path order (as every index lists them)."""
    ordered = sorted(found, key=lambda item: (-item[0], item[1]["path"]))
    return [
        FileHit(
            file_id=fields["file_id"],
            path=fields["path"],
            language=fields["language"],
            rank=rank,
            score=score,
            best_score=score,
            chunks=int(fields["chunks"]),
        )
        for rank, (score, fields) in enumerate(ordered, start=1)
    ]


def require_one_project(
    project_id: str, chunks: Sequence[IndexedChunk], files: Sequence[WholeFile]
) -> None:
    """A BM25 write is one project's: refuse chunks or files of another (ValueError)."""
    if not project_id:
        raise ValueError("a BM25 write names its project")
    found = {chunk.project_id for chunk in chunks} | {file.project_id for file in files}
    strays = found - {project_id}
    if strays:
        raise ValueError(
            f"a BM25 write is one project's ({project_id}); it holds chunks or files of "
            + ", ".join(sorted(strays))
        )


def whole_files(chunks: Iterable[IndexedChunk]) -> list[WholeFile]:
    """``whole_file`` of each file among ``chunks`` (every chunk of each file's version)."""
    by_file: dict[str, list[IndexedChunk]] = {}
    for chunk in chunks:
        by_file.setdefault(chunk.file_id, []).append(chunk)
    return [whole_file(found) for found in by_file.values()]


@dataclass(frozen=True, slots=True)
class EmbeddedChunk:
    chunk: IndexedChunk
    vector: Sequence[float]


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Restricts a search to one project and optionally a subsystem, languages, a path prefix
    (a plain string prefix of the relative path), the chunks valid as of a snapshot and the
    chunks of given symbols (their innermost symbol's node id)."""

    project_id: str
    subsystem: str = ""
    languages: tuple[str, ...] = ()
    path_prefix: str = ""
    max_snapshot_seq: int | None = None
    symbol_node_ids: tuple[str, ...] = ()

    def matches(self, chunk: IndexedChunk | WholeFile) -> bool:
        """The same rule every index applies (to a chunk or a whole-file document), for tests
        and in-memory checks."""
        return (
            chunk.project_id == self.project_id
            and (not self.subsystem or chunk.subsystem == self.subsystem)
            and (not self.languages or chunk.language in self.languages)
            and chunk.path.startswith(self.path_prefix)
            and (self.max_snapshot_seq is None or chunk.snapshot_seq <= self.max_snapshot_seq)
            and (
                not self.symbol_node_ids
                or getattr(chunk, "symbol_node_id", "") in self.symbol_node_ids
            )
        )


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    chunk: IndexedChunk
    score: float


@dataclass(frozen=True, slots=True)
class FileHit:
    """A file ranked by the BM25 scores of its chunks among a large lexical pool."""

    file_id: str
    path: str
    language: str
    rank: int
    score: float  # the sum of its chunks' scores in the pool
    best_score: float
    chunks: int


def rank_files(pool: Sequence[ScoredChunk], limit: int) -> list[FileHit]:
    """The files of a lexical pool, best first by the sum of their chunks' scores (a file that
    matches the question in many places is more likely the one), ties by path."""
    first: dict[str, IndexedChunk] = {}
    for scored in pool:
        first.setdefault(scored.chunk.file_id, scored.chunk)
    return best_files(
        [(scored.chunk.file_id, scored.score) for scored in pool], limit, lambda _: first
    )


def best_files(
    pool: Iterable[tuple[FileKey, float]],
    limit: int,
    describe: Callable[[Sequence[FileKey]], Mapping[FileKey, IndexedChunk]],
) -> list[FileHit]:
    """``rank_files`` of a pool known by file keys and chunk scores only: ``describe`` gives a
    chunk of each file it is asked for (its id, path and language), and it is asked only for
    the files that can be listed, those scoring at least the ``limit``-th best (the ties are
    broken by path). An index reads a few chunks instead of the whole pool."""
    if limit <= 0:
        return []
    scores: dict[FileKey, list[float]] = {}
    for key, score in pool:
        scores.setdefault(key, []).append(score)
    totals = {key: sum(values) for key, values in scores.items()}
    ordered = sorted(totals, key=totals.__getitem__, reverse=True)
    if len(ordered) > limit:
        floor = totals[ordered[limit - 1]]
        ordered = [key for key in ordered if totals[key] >= floor]
    chunks = describe(ordered)
    ordered.sort(key=lambda key: (-totals[key], chunks[key].path))
    return [
        FileHit(
            file_id=chunks[key].file_id,
            path=chunks[key].path,
            language=chunks[key].language,
            rank=rank,
            score=totals[key],
            best_score=max(scores[key]),
            chunks=len(scores[key]),
        )
        for rank, key in enumerate(ordered[:limit], start=1)
    ]


@dataclass(frozen=True, slots=True)
class FusedHit:
    """A chunk with its fused score and its 1-based rank and raw score in each list
    (rank 0 = not in that list)."""

    chunk: IndexedChunk
    score: float
    lexical_rank: int
    vector_rank: int
    lexical_score: float
    vector_score: float


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk as the ast service sent it, before it is placed in a project and subsystem."""

    chunk_id: str
    start_line: int
    end_line: int
    node_id: str
    kind: str
    symbol_node_id: str
    symbol_qualified_name: str
    text: str
    content_sha256: str
    ordinal: int


STAGE_SEARCHABLE = "retrieval"  # the file's chunks are in the BM25 index
STAGE_EMBEDDED = "vectors"  # ... and their vectors in the vector index


class FileChange(Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class ParsedPart:
    """One files.parsed message: a part of one file's chunks (or the file's deletion)."""

    job_id: str
    project_id: str
    snapshot_id: str
    snapshot_seq: int
    file_id: str
    path: str
    language: str
    sha256: str
    change: FileChange
    part_index: int
    part_count: int
    chunks: tuple[ChunkDraft, ...]

    @property
    def deleted(self) -> bool:
        return self.change is FileChange.DELETED

    def report(
        self, status: ReportStatus, error: str = "", stage: str = STAGE_SEARCHABLE
    ) -> FileReport:
        """What to tell ingestion about this part's file at ``stage``."""
        return FileReport(
            job_id=self.job_id,
            project_id=self.project_id,
            snapshot_id=self.snapshot_id,
            file_id=self.file_id,
            sha256=self.sha256,
            change=self.change,
            status=status,
            error=error,
            stage=stage,
        )

    def placed(self, draft: ChunkDraft, subsystem: str) -> IndexedChunk:
        return IndexedChunk(
            chunk_id=draft.chunk_id,
            project_id=self.project_id,
            snapshot_id=self.snapshot_id,
            snapshot_seq=self.snapshot_seq,
            file_id=self.file_id,
            path=self.path,
            language=self.language,
            subsystem=subsystem,
            start_line=draft.start_line,
            end_line=draft.end_line,
            node_id=draft.node_id,
            kind=draft.kind,
            symbol_node_id=draft.symbol_node_id,
            symbol_qualified_name=draft.symbol_qualified_name,
            text=draft.text,
            content_sha256=draft.content_sha256,
            ordinal=draft.ordinal,
        )


class ReportStatus(Enum):
    INDEXED = "indexed"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class VectorWork:
    """The chunks of one searchable file part that wait for their vectors, and how much they
    are worth (``locus.codepaths.VALUE_CLASSES``)."""

    part: ParsedPart
    subsystem: str
    value_class: str

    def chunks(self) -> list[IndexedChunk]:
        return [self.part.placed(draft, self.subsystem) for draft in self.part.chunks]


@dataclass(frozen=True, slots=True)
class FileReport:
    """What retrieval tells ingestion about one file of a job at one stage (index.updated):
    ``STAGE_SEARCHABLE`` or ``STAGE_EMBEDDED``."""

    job_id: str
    project_id: str
    snapshot_id: str
    file_id: str
    sha256: str
    change: FileChange
    status: ReportStatus
    error: str = ""
    stage: str = STAGE_SEARCHABLE
