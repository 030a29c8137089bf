"""The BM25Index contract, run against every adapter: tantivy always, OpenSearch when
LOCUS_TEST_OPENSEARCH_URL points at a server (skipped visibly otherwise)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from locus.retrieval.adapters.opensearch_bm25 import OpenSearchBM25Index
from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
from locus.retrieval.domain.model import ChunkFilter, IndexedChunk, rank_files, whole_files
from locus.retrieval.domain.ports import BM25Index

pytestmark = pytest.mark.contract

OPENSEARCH_URL = os.environ.get("LOCUS_TEST_OPENSEARCH_URL", "")
OpenIndex = Callable[[], Awaitable[BM25Index]]


@pytest.fixture(
    params=[
        "tantivy",
        pytest.param(
            "opensearch",
            marks=pytest.mark.skipif(
                not OPENSEARCH_URL,
                reason="OpenSearch adapter: set LOCUS_TEST_OPENSEARCH_URL to a server to run",
            ),
        ),
    ]
)
async def open_index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenIndex]:
    """Opens the adapter on the same storage each time it is called (for reopen tests)."""
    opened: list[BM25Index] = []
    index_name = f"locus-test-{uuid.uuid4().hex[:12]}"

    async def open_one() -> BM25Index:
        index: Any
        if request.param == "tantivy":
            index = TantivyBM25Index(tmp_path / "bm25")
        else:
            index = OpenSearchBM25Index(OPENSEARCH_URL, index_name)
        await index.open()
        opened.append(index)
        return index  # type: ignore[no-any-return]

    yield open_one
    for index in opened:
        await index.close()
    if request.param == "opensearch":
        from opensearchpy import AsyncOpenSearch

        client = AsyncOpenSearch(hosts=[OPENSEARCH_URL])
        await client.indices.delete(index=index_name, ignore_unavailable=True)
        await client.close()


def ids(hits: list[Any]) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


@pytest.fixture
def corpus(make_chunk: Any) -> list[IndexedChunk]:
    return [
        make_chunk(
            "upload-client",
            "class UploadClient:\n    def upload(self, path):\n        return self._send(path)",
            path="src/uploads/client.py",
            symbol="uploads.client.UploadClient",
        ),
        make_chunk(
            "retry-policy",
            "def enforce_retry_limit(attempts):\n    return min(attempts, MAX_RETRIES)",
            path="src/uploads/policy.py",
            symbol="uploads.policy.enforce_retry_limit",
        ),
        make_chunk(
            "http-client",
            "class HTTPClient:\n    timeout = 30",
            path="src/net/http.py",
            symbol="net.http.HTTPClient",
        ),
        make_chunk(
            "http-helper",
            "def make_http_client(): return connect()",
            path="lib/helpers.go",
            language="go",
            subsystem="tools",
            symbol="helpers.make_http_client",
            snapshot_seq=3,
        ),
        make_chunk(
            "other-project",
            "class UploadClient: pass",
            project_id="p2",
            path="src/uploads/client.py",
            file_id="f-p2-client",
        ),
    ]


async def test_identifier_query_ranks_its_definition_first(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    hits = await index.search("UploadClient", ChunkFilter("p1"), 10)
    assert ids(hits)[0] == "upload-client"
    assert hits[0].chunk == corpus[0]
    assert hits[0].score > 0


@pytest.mark.parametrize("query", ["HTTPClient", "HttpClient", "http_client", "http client"])
async def test_identifier_spellings_meet(
    open_index: OpenIndex, corpus: list[IndexedChunk], query: str
) -> None:
    index = await open_index()
    await index.write([], corpus)
    found = set(ids(await index.search(query, ChunkFilter("p1"), 10)))
    assert {"http-client", "http-helper"} <= found


async def test_plain_language_finds_inflected_words(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    assert ids(await index.search("retries", ChunkFilter("p1"), 10))[0] == "retry-policy"
    assert "upload-client" in ids(await index.search("uploading files", ChunkFilter("p1"), 10))


async def test_filters(open_index: OpenIndex, corpus: list[IndexedChunk]) -> None:
    index = await open_index()
    await index.write([], corpus)
    query = "UploadClient http client retry"
    assert set(ids(await index.search(query, ChunkFilter("p2"), 10))) == {"other-project"}
    assert ids(await index.search(query, ChunkFilter("p1", languages=("go",)), 10)) == [
        "http-helper"
    ]
    assert set(ids(await index.search(query, ChunkFilter("p1", path_prefix="src/up"), 10))) == {
        "upload-client",
        "retry-policy",
    }
    assert ids(await index.search(query, ChunkFilter("p1", subsystem="tools"), 10)) == [
        "http-helper"
    ]
    assert "http-helper" not in ids(
        await index.search(query, ChunkFilter("p1", max_snapshot_seq=2), 10)
    )
    every = ChunkFilter("p1", languages=("python", "go"), max_snapshot_seq=3)
    assert len(await index.search(query, every, 10)) == 4


async def test_limit_and_unmatched_queries(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    assert len(await index.search("client", ChunkFilter("p1"), 1)) == 1
    assert await index.search("zebra", ChunkFilter("p1"), 10) == []
    assert await index.search("   ...   ", ChunkFilter("p1"), 10) == []


async def test_removing_a_file_removes_all_its_chunks(
    open_index: OpenIndex, corpus: list[IndexedChunk], make_chunk: Any
) -> None:
    index = await open_index()
    second_part = make_chunk(
        "upload-client-2", "def download(self): pass", path="src/uploads/client.py"
    )
    await index.write([], [*corpus, second_part])
    assert await index.count("p1") == 5
    await index.write(["f-src/uploads/client.py"], [])
    assert await index.count("p1") == 3
    assert await index.count("p2") == 1  # another file, another project
    assert "upload-client" not in ids(await index.search("UploadClient", ChunkFilter("p1"), 10))


async def test_deleting_a_project_removes_its_chunks_and_whole_files_only(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus, whole_files(corpus))
    query = "UploadClient http client retry"
    await index.delete_project("p1")
    assert await index.count("p1") == 0
    assert await index.search(query, ChunkFilter("p1"), 10) == []
    assert await index.search_whole_files(query, ChunkFilter("p1"), 10) == []
    assert await index.file_chunks("f-src/uploads/client.py") == []
    assert ids(await index.search(query, ChunkFilter("p2"), 10)) == ["other-project"]
    assert len(await index.search_whole_files(query, ChunkFilter("p2"), 10)) == 1
    await index.delete_project("p1")  # a redelivered deletion finds nothing and succeeds
    await index.delete_project("never-indexed")
    assert await index.count("p2") == 1


async def test_rewriting_is_idempotent_and_replaces(
    open_index: OpenIndex, corpus: list[IndexedChunk], make_chunk: Any
) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.write([], corpus)  # redelivery
    assert await index.count("p1") == 4
    assert (
        ids(await index.search("enforce_retry_limit", ChunkFilter("p1"), 10)).count("retry-policy")
        == 1
    )
    changed = make_chunk(
        "retry-policy-v2",
        "def enforce_backoff(delay): return delay * 2",
        path="src/uploads/policy.py",
        snapshot_seq=2,
    )
    await index.write(["f-src/uploads/policy.py"], [changed])
    assert "retry-policy" not in ids(
        await index.search("enforce_retry_limit", ChunkFilter("p1"), 10)
    )
    assert ids(await index.search("backoff", ChunkFilter("p1"), 10)) == ["retry-policy-v2"]


async def test_persists_across_reopen(open_index: OpenIndex, corpus: list[IndexedChunk]) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.close()
    reopened = await open_index()
    assert await reopened.count("p1") == 4
    hits = await reopened.search("HttpClient", ChunkFilter("p1"), 10)
    assert ids(hits)[0] == "http-client"
    assert hits[0].chunk == corpus[2]


def _write_old_index(directory: Path, chunks: list[IndexedChunk], version: int) -> None:
    """An index as an older schema wrote it: 1 = analysed fields as pre-tokenized strings,
    2 = analysed fields as whitespace-joined terms; neither has the file_key column."""
    import json

    import tantivy

    from locus.retrieval.adapters.tantivy_bm25 import ANALYSED_FIELDS, KEYWORD_FIELDS
    from locus.retrieval.domain.analyzer import code_token_tuples, indexed_terms

    builder = tantivy.SchemaBuilder()
    for name in KEYWORD_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("snapshot_id", tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("snapshot_seq", indexed=True, fast=True)
    for name in ANALYSED_FIELDS:
        if version == 1:
            builder.add_text_field(name, index_option="freq")
        else:
            builder.add_text_field(name, tokenizer_name="whitespace", index_option="freq")
    builder.add_bytes_field("payload", stored=True)
    directory.mkdir(parents=True)
    index = tantivy.Index(builder.build(), path=str(directory), reuse=False)
    writer = index.writer(heap_size=20_000_000, num_threads=1)

    def add(document: Any, field: str, text: str) -> None:
        if version == 1:
            tokens = [tantivy.Token(*token) for token in code_token_tuples(text)]
            document.add_pre_tokenized_text(field, tantivy.PreTokenizedString(text, tokens))
        else:
            document.add_text(field, indexed_terms(text))

    for chunk in chunks:
        document = tantivy.Document()
        for name in KEYWORD_FIELDS:
            document.add_text(name, getattr(chunk, name))
        document.add_text("snapshot_id", chunk.snapshot_id)
        document.add_integer("snapshot_seq", chunk.snapshot_seq)
        add(document, "text", chunk.text)
        add(document, "symbol", chunk.symbol_qualified_name)
        add(document, "name", chunk.symbol_name)
        add(document, "path_tokens", chunk.path)
        document.add_bytes("payload", json.dumps(chunk.to_payload()).encode())
        writer.add_document(document)
    writer.commit()
    writer.wait_merging_threads()
    (directory / "locus-schema.json").write_text(json.dumps({"version": version}))


@pytest.mark.parametrize("version", [1, 2])
async def test_an_index_of_an_older_schema_is_rewritten_at_open_and_searches_the_same(
    tmp_path: Path, corpus: list[IndexedChunk], version: int
) -> None:
    """An upgrade keeps what was indexed (a rescan would not resend unchanged files): the old
    index is rewritten from its payloads, and searches answer as a fresh index would."""
    import json

    from locus.retrieval.adapters.tantivy_bm25 import SCHEMA_VERSION

    queries = ["UploadClient", "retry limit", "http client", "uploads"]
    project = ChunkFilter(project_id="p1")
    fresh = TantivyBM25Index(tmp_path / "fresh")
    await fresh.open()
    await fresh.write([], corpus)
    expected = [[(h.chunk, h.score) for h in await fresh.search(q, project, 10)] for q in queries]
    expected_files = [await fresh.search_with_files(q, project, 2, 10, 10) for q in queries]
    await fresh.close()

    upgraded_dir = tmp_path / "upgraded"
    _write_old_index(upgraded_dir, corpus, version)
    unfinished = tmp_path / "upgraded.migrating"  # a rewrite a crash cut short: redone
    unfinished.mkdir()
    (unfinished / "partial-segment").write_bytes(b"\0" * 64)
    upgraded = TantivyBM25Index(upgraded_dir)
    await upgraded.open()
    try:
        found = [
            [(h.chunk, h.score) for h in await upgraded.search(q, project, 10)] for q in queries
        ]
        assert found == expected
        assert [
            await upgraded.search_with_files(q, project, 2, 10, 10) for q in queries
        ] == expected_files
        assert await upgraded.count("p1") == 4
    finally:
        await upgraded.close()
    marker = json.loads((upgraded_dir / "locus-schema.json").read_text())
    assert marker == {"version": SCHEMA_VERSION}
    assert not (tmp_path / "upgraded.migrating").exists()


async def test_the_file_list_sums_each_files_chunks_over_the_pool_ties_by_path(
    open_index: OpenIndex, make_chunk: Any
) -> None:
    """Search's file list: every file of the pool by the sum of its chunks' scores, equal sums
    in path order, exactly as ranking the whole pool's chunks would list them."""
    chunks = []
    for number in range(40):
        # Files 0-9 share one text under different paths (equal sums: ties by path); the
        # others match "retry" in 1 to 4 chunks.
        copies = 2 if number < 10 else 1 + number % 4
        for copy in range(copies):
            text = f"def retry_{copy}(attempts):\n    return retry(attempts)  # {number % 3}"
            if number < 10:
                text = f"def retry_{copy}(attempts):\n    return retry(attempts)"
            chunks.append(
                make_chunk(f"c{number}-{copy}", text, path=f"src/m{(number * 7) % 40:02}.py")
            )
    index = await open_index()
    await index.write([], chunks)
    project = ChunkFilter(project_id="p1")
    pool = await index.search("retry attempts", project, 1000)
    assert len(pool) == len(chunks)
    for top_files in (1, 5, 10, 12, 40, 100):
        head, files = await index.search_with_files("retry attempts", project, 7, 1000, top_files)
        assert [(h.chunk, h.score) for h in head] == [(h.chunk, h.score) for h in pool[:7]]
        assert files == rank_files(pool, top_files)
    head, files = await index.search_with_files("retry attempts", project, 7, 1000, 40)
    sums = [f.score for f in files]
    assert sums == sorted(sums, reverse=True)
    assert {f.chunks for f in files} == {1, 2, 3, 4}
    tied = [f.path for f in files if f.score == files[-1].score]
    assert len(tied) > 1
    assert tied == sorted(tied)
    # A pool smaller than the head, and no file list asked for.
    assert (await index.search_with_files("retry", project, 5, 0, 0))[1] == []
    head, _ = await index.search_with_files("nothing matches this", project, 5, 1000, 10)
    assert head == []


def _file_of(make_chunk: Any, file_id: str, path: str, texts: list[str], **extra: Any) -> list:
    return [
        make_chunk(f"{file_id}-{n}", text, path=path, file_id=file_id, ordinal=n, **extra)
        for n, text in enumerate(texts)
    ]


async def test_whole_files_rank_a_file_whose_words_are_spread_over_its_chunks(
    open_index: OpenIndex, make_chunk: Any
) -> None:
    """No chunk of the upload client holds "retry", "limit" and "upload" together; its whole
    file does, and ranks above files where one chunk matches one word many times."""
    spread = _file_of(
        make_chunk,
        "f-client",
        "src/uploads/client.py",
        [
            "class UploadClient:\n    '''Sends files.'''",
            "    def send(self, path):\n        return self._retry(path)",
            "    def _limit(self):\n        return self.max_attempts",
        ],
    )
    crowded = _file_of(
        make_chunk, "f-retry", "src/net/retry.py", ["def retry(): retry(); retry(); retry()"]
    )
    unrelated = _file_of(make_chunk, "f-docs", "docs/intro.md", ["Welcome to the project"])
    index = await open_index()
    await index.write([], spread + crowded + unrelated, whole_files(spread + crowded + unrelated))
    found = await index.search_whole_files("upload retry limit", ChunkFilter(project_id="p1"), 10)
    assert [f.path for f in found] == ["src/uploads/client.py", "src/net/retry.py"]
    assert [f.rank for f in found] == [1, 2]
    assert found[0].file_id == "f-client"
    assert found[0].chunks == 3
    assert found[0].score > found[1].score > 0
    assert found[0].best_score == found[0].score
    assert await index.search_whole_files("", ChunkFilter(project_id="p1"), 10) == []
    assert await index.search_whole_files("upload", ChunkFilter(project_id="p1"), 0) == []
    # The path is part of the document: "uploads" occurs only in the client's path.
    by_path = await index.search_whole_files("uploads", ChunkFilter(project_id="p1"), 10)
    assert [f.path for f in by_path] == ["src/uploads/client.py"]


async def test_whole_files_obey_the_filters_and_removals(
    open_index: OpenIndex, make_chunk: Any
) -> None:
    python = _file_of(make_chunk, "f-py", "src/one.py", ["def retry(): pass"])
    go = _file_of(
        make_chunk, "f-go", "lib/two.go", ["func retry() {}"], language="go", subsystem="tools"
    )
    later = _file_of(make_chunk, "f-late", "src/later.py", ["def retry(): pass"], snapshot_seq=5)
    elsewhere = _file_of(make_chunk, "f-p2", "src/one.py", ["def retry(): pass"], project_id="p2")
    chunks = python + go + later + elsewhere
    index = await open_index()
    await index.write([], chunks, whole_files(chunks))

    async def paths(**filters: Any) -> set[str]:
        found = await index.search_whole_files("retry", ChunkFilter(**filters), 10)
        return {f.path for f in found}

    assert await paths(project_id="p1") == {"src/one.py", "lib/two.go", "src/later.py"}
    assert await paths(project_id="p2") == {"src/one.py"}
    assert await paths(project_id="p1", languages=("go",)) == {"lib/two.go"}
    assert await paths(project_id="p1", subsystem="tools") == {"lib/two.go"}
    assert await paths(project_id="p1", path_prefix="src/") == {"src/one.py", "src/later.py"}
    assert await paths(project_id="p1", max_snapshot_seq=4) == {"src/one.py", "lib/two.go"}
    # Removing a file removes its whole-file document with its chunks; rewriting replaces it.
    await index.write(["f-go"], [])
    assert await paths(project_id="p1") == {"src/one.py", "src/later.py"}
    changed = _file_of(make_chunk, "f-py", "src/one.py", ["def backoff(): pass"])
    await index.write(["f-py"], changed, whole_files(changed))
    assert await paths(project_id="p1") == {"src/later.py"}
    found = await index.search_whole_files("backoff", ChunkFilter(project_id="p1"), 10)
    assert [(f.file_id, f.chunks) for f in found] == [("f-py", 1)]


async def test_file_chunks_are_every_chunk_of_the_file(
    open_index: OpenIndex, corpus: list[IndexedChunk], make_chunk: Any
) -> None:
    index = await open_index()
    many = _file_of(make_chunk, "f-big", "src/big.py", [f"def f{n}(): pass" for n in range(30)])
    await index.write([], corpus + many)
    assert sorted(c.chunk_id for c in await index.file_chunks("f-big")) == sorted(
        c.chunk_id for c in many
    )
    assert {c.text for c in await index.file_chunks("f-big")} == {c.text for c in many}
    assert await index.file_chunks("no-such-file") == []


async def test_whole_files_persist_across_reopen(open_index: OpenIndex, make_chunk: Any) -> None:
    chunks = _file_of(make_chunk, "f-client", "src/client.py", ["def upload(): retry()"])
    index = await open_index()
    await index.write([], chunks, whole_files(chunks))
    before = await index.search_whole_files("upload", ChunkFilter(project_id="p1"), 5)
    await index.close()
    reopened = await open_index()
    assert await reopened.search_whole_files("upload", ChunkFilter(project_id="p1"), 5) == before
    assert before


async def test_an_index_from_before_whole_files_gets_them_at_open(
    tmp_path: Path, corpus: list[IndexedChunk], make_chunk: Any
) -> None:
    """Unchanged files are not sent again by a rescan: an index written before the whole-file
    index existed builds it from its chunks when opened, the same as writing them would."""
    import shutil

    spread = _file_of(make_chunk, "f-two", "src/two.py", ["def upload(): pass", "MAX = 3"])
    chunks = corpus + spread
    expected_dir = tmp_path / "expected" / "bm25"
    expected = TantivyBM25Index(expected_dir)
    await expected.open()
    await expected.write([], chunks, whole_files(chunks))
    queries = ["upload", "upload max", "http client", "retry limit"]
    project = ChunkFilter(project_id="p1")
    wanted = [await expected.search_whole_files(q, project, 10) for q in queries]
    await expected.close()

    old_dir = tmp_path / "old" / "bm25"
    old = TantivyBM25Index(old_dir)
    await old.open()
    await old.write([], chunks)  # chunks only, as before
    await old.close()
    shutil.rmtree(old_dir.with_name("bm25-files"))
    upgraded = TantivyBM25Index(old_dir)
    await upgraded.open()
    try:
        assert [await upgraded.search_whole_files(q, project, 10) for q in queries] == wanted
        assert wanted[1][0].path == "src/two.py"
        assert wanted[1][0].chunks == 2
    finally:
        await upgraded.close()
