"""BM25Index on OpenSearch (production). The code-aware analyzer runs here, in Python, and
OpenSearch indexes its tokens with a whitespace analyzer: the same tokens as the embedded
tantivy index, and no analyzer plugin to install on the cluster.

Each project has its own pair of one-shard indexes, ``<prefix>-p-<key>`` (chunks) and
``<prefix>-p-<key>-files`` (one document per file: its path and all its chunks' text), ``key``
a digest of the project id: BM25 statistics are the project's own, exactly as in the embedded
index, and deleting a project deletes its indexes. They are created on the project's first
write. The single ``<prefix>`` index of every project that earlier versions wrote is copied
into per-project indexes (``_reindex`` per project) and deleted when the adapter opens."""

from __future__ import annotations

import hashlib
import logging
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
    require_one_project,
)

log = logging.getLogger(__name__)

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
        self._prefix = index
        self._timeout = timeout_seconds
        self._options = client_options
        self._client: AsyncOpenSearch | None = None
        self._created: set[str] = set()  # project indexes known to exist

    def _names(self, project_id: str) -> tuple[str, str]:
        """The project's chunk and whole-file index names."""
        key = hashlib.sha256(project_id.encode()).hexdigest()[:32]
        return f"{self._prefix}-p-{key}", f"{self._prefix}-p-{key}-files"

    async def open(self) -> None:
        self._client = AsyncOpenSearch(hosts=[self._url], timeout=self._timeout, **self._options)
        await self._split_shared_index()

    async def _split_shared_index(self) -> None:
        """Copy the one index of every project (earlier versions) into per-project indexes,
        then delete it; a crash in between copies again (documents keep their ids)."""
        client = self._require()
        shared, shared_files = self._prefix, f"{self._prefix}-files"
        if not await client.indices.exists(index=shared):
            return
        body = {"size": 0, "aggs": {"projects": {"terms": {"field": "project_id", "size": 65536}}}}
        found = await client.search(index=shared, body=body)
        projects = [bucket["key"] for bucket in found["aggregations"]["projects"]["buckets"]]
        sources = [shared]
        if await client.indices.exists(index=shared_files):
            sources.append(shared_files)
        for project_id in projects:
            await self._create(project_id)
            for source, dest in zip(sources, self._names(project_id), strict=False):
                await client.reindex(
                    body={
                        "source": {"index": source, "query": {"term": {"project_id": project_id}}},
                        "dest": {"index": dest},
                    },
                    refresh=True,
                    wait_for_completion=True,
                )
        await client.indices.delete(index=[shared, shared_files], ignore_unavailable=True)
        log.info("OpenSearch index %s split into %d project indexes", shared, len(projects))

    async def _create(self, project_id: str) -> None:
        if project_id in self._created:
            return
        client = self._require()
        for name, mappings in zip(self._names(project_id), (MAPPINGS, FILE_MAPPINGS), strict=True):
            if not await client.indices.exists(index=name):
                await client.indices.create(
                    index=name,
                    body={"settings": {"number_of_shards": 1}, "mappings": mappings},
                    ignore=400,  # created meanwhile by another replica of this service
                )
        self._created.add(project_id)

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
        project_id: str,
        remove_files: Sequence[str],
        chunks: Sequence[IndexedChunk],
        files: Sequence[WholeFile] = (),
    ) -> None:
        require_one_project(project_id, chunks, files)
        client = self._require()
        chunk_index, files_index = self._names(project_id)
        # Nothing to write, or only removals from a project with no index: nothing to do.
        if not (chunks or files) and (
            not remove_files or not await client.indices.exists(index=chunk_index)
        ):
            return
        await self._create(project_id)
        if remove_files:
            for name in (chunk_index, files_index):
                await client.delete_by_query(
                    index=name,
                    body={"query": {"terms": {"file_id": list(dict.fromkeys(remove_files))}}},
                    refresh=True,
                    conflicts="proceed",
                )
        actions = [
            {"_index": chunk_index, "_id": chunk.chunk_id, "_source": _document(chunk)}
            for chunk in chunks
        ] + [
            {"_index": files_index, "_id": file.file_id, "_source": _file_document(file)}
            for file in files
        ]
        if actions:
            await async_bulk(client, actions, refresh="wait_for")

    async def delete_project(self, project_id: str) -> None:
        await self._require().indices.delete(
            index=list(self._names(project_id)), ignore_unavailable=True
        )
        self._created.discard(project_id)

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
        response = await self._require().search(
            index=self._names(filters.project_id)[0], body=body, ignore_unavailable=True
        )
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
        response = await self._require().search(
            index=self._names(filters.project_id)[1], body=body, ignore_unavailable=True
        )
        found = [(float(hit["_score"]), hit["_source"]) for hit in response["hits"]["hits"]]
        return ranked_whole_files(found)

    async def file_chunks(self, project_id: str, file_id: str) -> list[IndexedChunk]:
        body = {
            "size": MAX_FILE_CHUNKS,
            "_source": ["payload"],
            "query": {"term": {"file_id": file_id}},
        }
        response = await self._require().search(
            index=self._names(project_id)[0], body=body, ignore_unavailable=True
        )
        return [
            IndexedChunk.from_payload(hit["_source"]["payload"]) for hit in response["hits"]["hits"]
        ]

    async def count(self, project_id: str) -> int:
        response = await self._require().count(
            index=self._names(project_id)[0],
            body={"query": {"term": {"project_id": project_id}}},
            ignore_unavailable=True,
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
