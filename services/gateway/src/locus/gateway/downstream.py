"""What the gateway needs from the other services, as ports: the project directory and file
contents (ingestion), chunk search (retrieval), the symbol index (ast), impact analysis and
answer generation.
Adapters raise ``locus.rpc`` errors that keep the downstream status code and message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from locus.v1 import answer_pb2, ast_pb2, impact_pb2, ingestion_pb2, retrieval_pb2


class ProjectDirectory(Protocol):
    async def get_project(self, project_ref: str) -> ingestion_pb2.Project:
        """The ingestion Project for an id or a name (NOT_FOUND when unknown)."""

    async def score_file_history(
        self, request: ingestion_pb2.ScoreFileHistoryRequest
    ) -> ingestion_pb2.ScoreFileHistoryResponse:
        """ingestion ScoreFileHistory: the change history of candidate files."""


class ProjectRegistry(ProjectDirectory, Protocol):
    async def list_projects(
        self, request: ingestion_pb2.ListProjectsRequest
    ) -> ingestion_pb2.ListProjectsResponse:
        """ingestion ListProjects: a page of projects (by system or subsystem)."""


class FileContents(Protocol):
    """The scanned files of a project and their content (ingestion)."""

    async def list_files(
        self, request: ingestion_pb2.ListFilesRequest
    ) -> ingestion_pb2.ListFilesResponse:
        """ingestion ListFiles: ListFilesRequest → ListFilesResponse (by path prefix)."""

    async def get_file_content(
        self, request: ingestion_pb2.GetFileContentRequest
    ) -> ingestion_pb2.GetFileContentResponse:
        """ingestion GetFileContent: the lines of a stored file, by its sha256."""


class ChunkSearch(Protocol):
    async def search(self, request: retrieval_pb2.SearchRequest) -> retrieval_pb2.SearchResponse:
        """retrieval Search: SearchRequest → SearchResponse."""

    async def score_symbols(
        self, request: retrieval_pb2.ScoreSymbolsRequest
    ) -> retrieval_pb2.ScoreSymbolsResponse:
        """retrieval ScoreSymbols: the question's vector similarity to candidate symbols."""


class SymbolIndex(Protocol):
    async def enrich(self, request: ast_pb2.EnrichRequest) -> ast_pb2.EnrichResponse:
        """ast Enrich: EnrichRequest → EnrichResponse."""

    async def find_symbols(
        self, request: ast_pb2.FindSymbolsRequest
    ) -> ast_pb2.FindSymbolsResponse:
        """ast FindSymbols: FindSymbolsRequest → FindSymbolsResponse."""

    async def list_file_symbols(
        self, request: ast_pb2.ListFileSymbolsRequest
    ) -> ast_pb2.ListFileSymbolsResponse:
        """ast ListFileSymbols: ListFileSymbolsRequest → ListFileSymbolsResponse."""

    async def get_symbol_texts(
        self, request: ast_pb2.GetSymbolTextsRequest
    ) -> ast_pb2.GetSymbolTextsResponse:
        """ast GetSymbolTexts: GetSymbolTextsRequest → GetSymbolTextsResponse."""


class ImpactAnalysis(Protocol):
    async def compute(
        self, request: impact_pb2.ComputeImpactRequest
    ) -> impact_pb2.ComputeImpactResponse:
        """impact Compute: ComputeImpactRequest → ComputeImpactResponse."""


class AnswerStream(Protocol):
    """GenerateEvents of one answer; ``cancel`` stops it (and the LLM request behind it)."""

    def __aiter__(self) -> AsyncIterator[answer_pb2.GenerateEvent]: ...

    def cancel(self) -> None: ...


class AnswerGenerator(Protocol):
    def generate(self, request: answer_pb2.GenerateRequest) -> AnswerStream:
        """answer Generate: GenerateRequest → a stream of GenerateEvent."""
