"""What a ranking reads and returns: the question's retrieval hits, the symbols found by name,
graph neighbours and file history (``RankingInput``), and ranked symbols and files with the
evidence that put them there (``Ranking``). ``Ranker`` is the seam every ranking implements."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from locus.gateway.domain.question_cues import QuestionCues

RRF_K = 60  # the reciprocal-rank-fusion constant Locate asks retrieval to fuse with


@dataclass(frozen=True)
class SymbolRef:
    node_id: str
    name: str
    qualified_name: str
    scope_name: str
    # "module" | "class" | "function" | "method" | "constructor" | "interface" | "struct" |
    # "enum" | "trait" | "namespace" | "" (families: symbol_kinds)
    kind: str
    file_id: str
    relative_path: str
    language: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class ChunkMatch:
    """One retrieval hit and the innermost symbol that covers it (None when unknown)."""

    chunk_id: str
    file_id: str
    relative_path: str
    language: str
    start_line: int
    end_line: int
    rank: int  # 1-based position in the fused list
    score: float  # fused retrieval score
    lexical_rank: int = 0  # 0 = not in the lexical list
    vector_rank: int = 0  # 0 = not in the vector list
    lexical_score: float = 0.0
    vector_score: float = 0.0
    symbol: SymbolRef | None = None


@dataclass(frozen=True)
class FileMatch:
    """A file of retrieval's file list: ranked by the BM25 of its chunks among a large pool
    (it reaches files the chunk list leaves out)."""

    file_id: str
    relative_path: str
    language: str
    rank: int
    score: float  # the sum of its chunks' BM25 scores in the pool
    best_score: float
    chunks: int


@dataclass(frozen=True)
class PartHit:
    """A chunk found by searching one part of the question alone (``question_parts``): where
    it lies, and its place and BM25 score in that part's lexical list."""

    file_id: str
    relative_path: str
    start_line: int
    end_line: int
    rank: int
    score: float


@dataclass(frozen=True)
class FileHistory:
    """A candidate file's change history (ingestion ScoreFileHistory): among the newest
    commits of its source, how many changed it, how many commits ago the last did, its place
    among the history's files by how often they change, and the BM25 of the question against
    the messages of the commits that changed it."""

    relative_path: str
    commits: int
    last_change: int
    change_percentile: float
    message_score: float


@dataclass(frozen=True)
class Evidence:
    signal: str  # "bm25", "vector", "identifier", "dotted_name", "path", "stacktrace", ...
    detail: str
    weight: float  # what the signal added to the score (negative when it lowered it)
    chunk_id: str = ""


@dataclass(frozen=True)
class RankedSymbol:
    symbol: SymbolRef
    score: float
    evidence: tuple[Evidence, ...]
    chunk_ids: tuple[str, ...]  # the chunks that matched it, best first


@dataclass(frozen=True)
class RankedFile:
    file_id: str
    relative_path: str
    language: str
    score: float
    symbols: tuple[RankedSymbol, ...]
    evidence: tuple[Evidence, ...]
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True)
class Ranking:
    files: tuple[RankedFile, ...] = ()
    symbols: tuple[RankedSymbol, ...] = ()


@dataclass(frozen=True)
class GraphNeighbor:
    """A symbol one hop from a seed (a symbol a first ranking put on top) in the code graph."""

    symbol: SymbolRef
    seed_node_id: str
    relation: str  # "calls" | "contains" | "inherits" | "imports" | "references"
    reverse: bool  # True: walked against the edge (called-by, contained-in, ...)


@dataclass(frozen=True)
class RankingInput:
    cues: QuestionCues
    chunks: Sequence[ChunkMatch]
    named_symbols: Sequence[SymbolRef] = ()  # found by looking up names from the question
    graph_neighbors: Sequence[GraphNeighbor] = ()  # one hop from the first ranking's best
    # The functions and methods of the first ranking's best files (their outlines): a changed
    # function that no chunk matched can still be ranked.
    file_symbols: Sequence[SymbolRef] = ()
    file_hits: Sequence[FileMatch] = ()  # retrieval's file list
    # Retrieval's whole-file list (one BM25 document per file; score = the file's BM25). Only
    # the final ranking gets it: the first one, which picks graph seeds and outlined files,
    # does not.
    whole_file_hits: Sequence[FileMatch] = ()
    # The same whole-file search by each part of the question alone (``question_parts``: its
    # title, its opening), keyed by part. Columns of the learned ranking, and candidates: a file
    # only a part found competes like a file only the whole-file list found.
    whole_file_parts: Mapping[str, Sequence[FileMatch]] = field(default_factory=dict)
    # The chunk search by each part of the question alone, keyed by part (columns of the
    # learned ranking only: each hit speaks for the innermost candidate symbol that holds it).
    part_chunks: Mapping[str, Sequence[PartHit]] = field(default_factory=dict)
    # The change history of the final candidates' files (features of the learned ranking only);
    # ``history_commits`` = 0: the project has no git history (or ingestion did not answer).
    file_history: Sequence[FileHistory] = ()
    history_commits: int = 0
    # The cosine similarity of the question to each scored symbol's best chunk (retrieval
    # ScoreSymbols over the stored vectors; features of the learned ranking only). Empty: the
    # project has no vectors yet, or retrieval did not answer.
    symbol_similarity: Mapping[str, float] = field(default_factory=dict)
    include_tests: bool = False
    max_files: int = 10
    max_symbols: int = 20


def candidate_paths(request: RankingInput) -> list[str]:
    """The relative path of every file a ranking of ``request`` can hold, first seen first."""
    paths: dict[str, None] = {}
    for chunk in request.chunks:
        paths[chunk.relative_path] = None
    for symbols in (request.named_symbols, request.file_symbols):
        for symbol in symbols:
            paths[symbol.relative_path] = None
    for neighbor in request.graph_neighbors:
        paths[neighbor.symbol.relative_path] = None
    for match in file_list_matches(request):
        paths[match.relative_path] = None
    return list(paths)


def file_list_matches(request: RankingInput) -> Iterator[FileMatch]:
    """Every file list's matches: retrieval's file list, the whole-file list, then each part's
    whole-file list (in ``whole_file_parts`` order)."""
    yield from request.file_hits
    yield from request.whole_file_hits
    for hits in request.whole_file_parts.values():
        yield from hits


class Ranker(Protocol):
    def rank(self, request: RankingInput) -> Ranking: ...
