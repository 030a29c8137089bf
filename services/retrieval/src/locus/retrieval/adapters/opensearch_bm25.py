"""BM25Index on OpenSearch (production). The code-aware analyzer runs here, in Python, and
OpenSearch indexes its tokens with a whitespace analyzer: the same tokens as the embedded
tantivy index, and no analyzer plugin to install on the cluster. Whole files are a second index
(``<index>-files``): one document per file, its path and all its chunks' text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import AsyncOpenSearch
from opensearchpy.helpers import async_bulk

from locus.retrieval.domain.analyzer import analyze, query_terms
from locus.retrieval.domain.model import (
    ChunkFilter,
    FileHit,
    IndexedChunk,
    ScoredChunk,
    WholeFile,
    rank_files,
    ranked_whole_files,
)

ANALYSED_FIELDS = {"text_terms": 1.0, "symbol_terms": 1.5, "name_terms": 3.0, "path_terms": 1.5}
KEYWORD_FIELDS = ("chunk_id", "file_id", "project_id", "subsystem", "language", "path")

MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        **{name: {"type": "keyword"} for name in KEYWORD_FIELDS},
        "snapshot_id": {"type": "keyword"},
        "snapshot_seq": {"type": "long"},
        **{name: {"type": "text", "analyzer": "whitespace"} for name in ANALYSED_FIELDS},
        "payload": {"type": "object", "enabled": False},
    },
}


FILE_KEYWORD_FIELDS = ("file_id", "project_id", "subsystem", "language", "path")
FILE_MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        **{name: {"type": "keyword"} for name in FILE_KEYWORD_FIELDS},
        "snapshot_seq": {"type": "long"},
        "terms": {"type": "text", "analyzer": "whitespace"},
        "chunks": {"type": "integer"},
    },
}
# A file's chunks are read back only when it was indexed in several batches (large files).
MAX_FILE_CHUNKS = 10_000


class OpenSearchBM25Index:
    def __init__(
        self, url: str, index: str, *, timeout_seconds: float = 30.0, **client_options: Any
    ) -> None:
        self._url = url
        self._index = index
        self._files_index = f"{index}-files"
        self._timeout = timeout_seconds
        self._options = client_options
        self._client: AsyncOpenSearch | None = None

    async def open(self) -> None:
        client = AsyncOpenSearch(hosts=[self._url], timeout=self._timeout, **self._options)
        self._client = client
        for name, mappings in ((self._index, MAPPINGS), (self._files_index, FILE_MAPPINGS)):
            if not await client.indices.exists(index=name):
                await client.indices.create(
                    index=name,
                    body={"settings": {"number_of_shards": 1}, "mappings": mappings},
                )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _require(self) -> AsyncOpenSearch:
        if self._client is None:
            raise RuntimeError("OpenSearchBM25Index is not open")
        return self._client

    async def write(
        self,
        remove_files: Sequence[str],
        chunks: Sequence[IndexedChunk],
        files: Sequence[WholeFile] = (),
    ) -> None:
        client = self._require()
        if remove_files:
            for name in (self._index, self._files_index):
                await client.delete_by_query(
                    index=name,
                    body={"query": {"terms": {"file_id": list(dict.fromkeys(remove_files))}}},
                    refresh=True,
                    conflicts="proceed",
                )
        actions = [
            {"_index": self._index, "_id": chunk.chunk_id, "_source": _document(chunk)}
            for chunk in chunks
        ] + [
            {"_index": self._files_index, "_id": file.file_id, "_source": _file_document(file)}
            for file in files
        ]
        if actions:
            await async_bulk(client, actions, refresh="wait_for")

    async def delete_project(self, project_id: str) -> None:
        client = self._require()
        for name in (self._index, self._files_index):
            await client.delete_by_query(
                index=name,
                body={"query": {"term": {"project_id": project_id}}},
                refresh=True,
                conflicts="proceed",
            )

    async def search(self, query: str, filters: ChunkFilter, limit: int) -> list[ScoredChunk]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        text = " ".join(terms)
        body = {
            "size": limit,
            "_source": ["payload"],
            "query": {
                "bool": {
                    "should": [
                        {"match": {field: {"query": text, "boost": boost}}}
                        for field, boost in ANALYSED_FIELDS.items()
                    ],
                    "minimum_should_match": 1,
                    "filter": _filter_clauses(filters),
                }
            },
        }
        response = await self._require().search(index=self._index, body=body)
        return [
            ScoredChunk(IndexedChunk.from_payload(hit["_source"]["payload"]), float(hit["_score"]))
            for hit in response["hits"]["hits"]
        ]

    async def search_with_files(
        self, query: str, filters: ChunkFilter, limit: int, pool: int, top_files: int
    ) -> tuple[list[ScoredChunk], list[FileHit]]:
        found = await self.search(query, filters, max(limit, pool))
        return found[:limit], rank_files(found, top_files)

    async def search_whole_files(
        self, query: str, filters: ChunkFilter, limit: int
    ) -> list[FileHit]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        body = {
            "size": limit,
            "_source": ["file_id", "path", "language", "chunks"],
            "query": {
                "bool": {
                    "should": [{"match": {"terms": {"query": " ".join(terms)}}}],
                    "minimum_should_match": 1,
                    "filter": _filter_clauses(filters),
                }
            },
        }
        response = await self._require().search(index=self._files_index, body=body)
        found = [(float(hit["_score"]), hit["_source"]) for hit in response["hits"]["hits"]]
        return ranked_whole_files(found)

    async def file_chunks(self, file_id: str) -> list[IndexedChunk]:
        body = {
            "size": MAX_FILE_CHUNKS,
            "_source": ["payload"],
            "query": {"term": {"file_id": file_id}},
        }
        response = await self._require().search(index=self._index, body=body)
        return [
            IndexedChunk.from_payload(hit["_source"]["payload"]) for hit in response["hits"]["hits"]
        ]

    async def count(self, project_id: str) -> int:
        response = await self._require().count(
            index=self._index, body={"query": {"term": {"project_id": project_id}}}
        )
        return int(response["count"])


def _document(chunk: IndexedChunk) -> dict[str, Any]:
    return {
        **{name: getattr(chunk, name) for name in KEYWORD_FIELDS},
        "snapshot_id": chunk.snapshot_id,
        "snapshot_seq": chunk.snapshot_seq,
        "text_terms": " ".join(analyze(chunk.text)),
        "symbol_terms": " ".join(analyze(chunk.symbol_qualified_name)),
        "name_terms": " ".join(analyze(chunk.symbol_name)),
        "path_terms": " ".join(analyze(chunk.path)),
        "payload": chunk.to_payload(),
    }


def _file_document(file: WholeFile) -> dict[str, Any]:
    return {
        **{name: getattr(file, name) for name in FILE_KEYWORD_FIELDS},
        "snapshot_seq": file.snapshot_seq,
        "terms": " ".join([*analyze(file.path), *analyze(file.text)]),
        "chunks": file.chunks,
    }


def _filter_clauses(filters: ChunkFilter) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = [{"term": {"project_id": filters.project_id}}]
    if filters.subsystem:
        clauses.append({"term": {"subsystem": filters.subsystem}})
    if filters.languages:
        clauses.append({"terms": {"language": list(filters.languages)}})
    if filters.path_prefix:
        clauses.append({"prefix": {"path": filters.path_prefix}})
    if filters.max_snapshot_seq is not None:
        clauses.append({"range": {"snapshot_seq": {"lte": filters.max_snapshot_seq}}})
    return clauses
