"""The ports of the retrieval service. Every adapter of a port passes the same contract suite
(tests/contract/retrieval); blocking libraries run in a worker thread inside the adapter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from locus.retrieval.domain.model import (
    ChunkFilter,
    EmbeddedChunk,
    FileHit,
    FileReport,
    IndexedChunk,
    ScoredChunk,
    VectorWork,
    WholeFile,
)


class BM25Index(Protocol):
    """Lexical index of chunks, and of whole files (one document per file: its path and the
    text of all its chunks), analysed with the code-aware analyzer. Each project is indexed on
    its own: its BM25 statistics (document frequencies, average lengths) are the project's, so
    writing or deleting one project never changes another's scores."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def write(
        self,
        project_id: str,
        remove_files: Sequence[str],
        chunks: Sequence[IndexedChunk],
        files: Sequence[WholeFile] = (),
    ) -> None:
        """In ``project_id``: remove every chunk and the whole-file document of
        ``remove_files``, then add ``chunks`` (replacing any chunk with the same chunk_id) and
        ``files`` (replacing the document of the same file). Durable and visible to searches
        once it returns. A chunk or file of another project is refused (ValueError)."""
        ...

    async def search(self, query: str, filters: ChunkFilter, limit: int) -> list[ScoredChunk]:
        """Best first; an empty list when no term of the query occurs."""
        ...

    async def search_with_files(
        self, query: str, filters: ChunkFilter, limit: int, pool: int, top_files: int
    ) -> tuple[list[ScoredChunk], list[FileHit]]:
        """``search(limit)`` and the ``top_files`` best files of the best ``max(limit, pool)``
        chunks, exactly as ``rank_files`` lists them (Search's file list)."""
        ...

    async def search_whole_files(
        self, query: str, filters: ChunkFilter, limit: int
    ) -> list[FileHit]:
        """The ``limit`` best whole-file documents by BM25, ranked 1..n (ties by path);
        ``score`` and ``best_score`` are the document's score, ``chunks`` its chunk count."""
        ...

    async def file_chunks(self, project_id: str, file_id: str) -> list[IndexedChunk]:
        """Every chunk of the project's file in the index (a file indexed in several batches
        is made whole from them)."""
        ...

    async def count(self, project_id: str) -> int: ...

    async def delete_project(self, project_id: str) -> None:
        """Remove every chunk and whole-file document of the project; durable and invisible to
        searches once it returns. Deleting a project with nothing indexed does nothing."""
        ...


class VectorIndex(Protocol):
    """Dense-vector index of chunks (cosine similarity)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def write(self, remove_files: Sequence[str], chunks: Sequence[EmbeddedChunk]) -> None:
        """Remove every vector of ``remove_files``, then add ``chunks`` (replacing any with the
        same chunk_id); durable and visible to searches once it returns."""
        ...

    async def search(
        self, vector: Sequence[float], filters: ChunkFilter, limit: int
    ) -> list[ScoredChunk]: ...

    async def count(self, project_id: str) -> int: ...

    async def delete_project(self, project_id: str) -> None:
        """Same contract as ``BM25Index.delete_project`` (by the points' project_id)."""
        ...


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of ``dimension`` floats."""

    @property
    def model_id(self) -> str:
        """Names the model: cached vectors are keyed by it, so a new model re-embeds."""
        ...

    @property
    def dimension(self) -> int: ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, in order; shape (len(texts), dimension)."""
        ...


class ProjectCatalog(Protocol):
    """What retrieval needs to know about a project that events do not carry."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def subsystem_of(self, project_id: str) -> str: ...

    def forget(self, project_id: str) -> None:
        """The project was deleted: drop what is cached of it."""
        ...


class IndexReporter(Protocol):
    """Tells the rest of the system that files were indexed, skipped or failed at a stage."""

    async def report(self, reports: Sequence[FileReport]) -> None: ...


class VectorWorkQueue(Protocol):
    """Durable background work: chunks that are searchable and wait for their vectors."""

    async def enqueue(self, works: Sequence[VectorWork]) -> None:
        """Returns once every work is stored durably (a crash after it loses nothing)."""
        ...
