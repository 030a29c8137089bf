"""What the gateway needs from the other services, as ports: the project directory and file
contents (ingestion), chunk search (retrieval), the symbol index (ast), impact analysis and
answer generation.
Adapters raise ``locus.rpc`` errors that keep the downstream status code and message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

# Messages are locus.v1 protobufs (typed as Any: generated code is not type-checked).
Message = Any


class ProjectDirectory(Protocol):
    async def get_project(self, project_ref: str) -> Message:
        """The ingestion Project for an id or a name (NOT_FOUND when unknown)."""

    async def score_file_history(self, request: Message) -> Message:
        """ingestion ScoreFileHistory: the change history of candidate files."""


class ProjectRegistry(ProjectDirectory, Protocol):
    async def list_projects(self, request: Message) -> Message:
        """ingestion ListProjects: a page of projects (by system or subsystem)."""


class FileContents(Protocol):
    """The scanned files of a project and their content (ingestion)."""

    async def list_files(self, request: Message) -> Message:
        """ingestion ListFiles: ListFilesRequest → ListFilesResponse (by path prefix)."""

    async def get_file_content(self, request: Message) -> Message:
        """ingestion GetFileContent: the lines of a stored file, by its sha256."""


class ChunkSearch(Protocol):
    async def search(self, request: Message) -> Message:
        """retrieval Search: SearchRequest → SearchResponse."""

    async def score_symbols(self, request: Message) -> Message:
        """retrieval ScoreSymbols: the question's vector similarity to candidate symbols."""


class SymbolIndex(Protocol):
    async def enrich(self, request: Message) -> Message:
        """ast Enrich: EnrichRequest → EnrichResponse."""

    async def find_symbols(self, request: Message) -> Message:
        """ast FindSymbols: FindSymbolsRequest → FindSymbolsResponse."""

    async def list_file_symbols(self, request: Message) -> Message:
        """ast ListFileSymbols: ListFileSymbolsRequest → ListFileSymbolsResponse."""

    async def get_symbol_texts(self, request: Message) -> Message:
        """ast GetSymbolTexts: GetSymbolTextsRequest → GetSymbolTextsResponse."""


class ImpactAnalysis(Protocol):
    async def compute(self, request: Message) -> Message:
        """impact Compute: ComputeImpactRequest → ComputeImpactResponse."""


class AnswerStream(Protocol):
    """GenerateEvents of one answer; ``cancel`` stops it (and the LLM request behind it)."""

    def __aiter__(self) -> AsyncIterator[Message]: ...

    def cancel(self) -> None: ...


class AnswerGenerator(Protocol):
    def generate(self, request: Message) -> AnswerStream:
        """answer Generate: GenerateRequest → a stream of GenerateEvent."""
