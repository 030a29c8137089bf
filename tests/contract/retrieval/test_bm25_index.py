"""The BM25Index contract, run against every adapter: tantivy always, OpenSearch when
LOCUS_TEST_OPENSEARCH_URL points at a server (skipped visibly otherwise)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from locus.retrieval.adapters import tantivy_bm25
from locus.retrieval.adapters.opensearch_bm25 import OpenSearchBM25Index
from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index, project_key
from locus.retrieval.domain.model import (
    ChunkFilter,
    IndexedChunk,
    WholeFile,
    rank_files,
    whole_files,
)
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


async def put(
    index: BM25Index, chunks: list[IndexedChunk], files: list[WholeFile] | None = None
) -> None:
    """Write ``chunks`` and ``files`` as the indexer does: one write per project."""
    for project_id in dict.fromkeys(c.project_id for c in chunks):
        await index.write(
            project_id,
            [],
            [c for c in chunks if c.project_id == project_id],
            [f for f in files or [] if f.project_id == project_id],
        )


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
    await put(index, corpus)
    hits = await index.search("UploadClient", ChunkFilter("p1"), 10)
    assert ids(hits)[0] == "upload-client"
    assert hits[0].chunk == corpus[0]
    assert hits[0].score > 0


@pytest.mark.parametrize("query", ["HTTPClient", "HttpClient", "http_client", "http client"])
async def test_identifier_spellings_meet(
    open_index: OpenIndex, corpus: list[IndexedChunk], query: str
) -> None:
    index = await open_index()
    await put(index, corpus)
    found = set(ids(await index.search(query, ChunkFilter("p1"), 10)))
    assert {"http-client", "http-helper"} <= found


async def test_plain_language_finds_inflected_words(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    await put(index, corpus)
    assert ids(await index.search("retries", ChunkFilter("p1"), 10))[0] == "retry-policy"
    assert "upload-client" in ids(await index.search("uploading files", ChunkFilter("p1"), 10))


CJK_CHUNKS = [
    ("input-box", "# 输入框的高度，多行输入时自动调整\nINPUT_BOX_LINES = 2", "ui/layout.py"),
    ("proxy", "# 代理设置：如果网络不通，请检查代理\nPROXY = None", "config.py"),
]


async def test_a_question_in_chinese_finds_the_code_its_comments_describe(
    open_index: OpenIndex, make_chunk: Any
) -> None:
    # A report written without spaces between words ("the input box is too small, multi-line
    # input is inconvenient") meets the comment that says the same in other words.
    index = await open_index()
    chunks = [make_chunk(c, text, path=path, file_id=f"f-{c}") for c, text, path in CJK_CHUNKS]
    await put(index, chunks, whole_files(chunks))
    question = "[建议]input框还是太小了，多行输入还是不方便"
    assert ids(await index.search(question, ChunkFilter("p1"), 10))[0] == "input-box"
    files = await index.search_whole_files(question, ChunkFilter("p1"), 10)
    assert files[0].path == "ui/layout.py"
    assert ids(await index.search("代理设置", ChunkFilter("p1"), 10)) == ["proxy"]


async def test_filters(open_index: OpenIndex, corpus: list[IndexedChunk]) -> None:
    index = await open_index()
    await put(index, corpus)
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
    await put(index, corpus)
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
    await put(index, [*corpus, second_part])
    assert await index.count("p1") == 5
    await index.write("p1", ["f-src/uploads/client.py"], [])
    assert await index.count("p1") == 3
    assert await index.count("p2") == 1  # another file, another project
    assert "upload-client" not in ids(await index.search("UploadClient", ChunkFilter("p1"), 10))


async def test_deleting_a_project_removes_its_chunks_and_whole_files_only(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    await put(index, corpus, whole_files(corpus))
    query = "UploadClient http client retry"
    await index.delete_project("p1")
    assert await index.count("p1") == 0
    assert await index.search(query, ChunkFilter("p1"), 10) == []
    assert await index.search_whole_files(query, ChunkFilter("p1"), 10) == []
    assert await index.file_chunks("p1", "f-src/uploads/client.py") == []
    assert ids(await index.search(query, ChunkFilter("p2"), 10)) == ["other-project"]
    assert len(await index.search_whole_files(query, ChunkFilter("p2"), 10)) == 1
    await index.delete_project("p1")  # a redelivered deletion finds nothing and succeeds
    await index.delete_project("never-indexed")
    assert await index.count("p2") == 1


async def test_each_project_scores_with_its_own_statistics(
    open_index: OpenIndex, make_chunk: Any
) -> None:
    """A word common in one repository is rare in another: writing (or deleting) one project
    never moves the other's scores, and a project scores as it would alone."""
    mine = [
        make_chunk("retry", "def retry_upload(): return backoff()", path="src/retry.py"),
        make_chunk("client", "class Client: pass", path="src/client.py"),
        make_chunk("config", "TIMEOUT = 30", path="src/config.py"),
    ]
    theirs = [
        make_chunk(
            f"noise-{n}",
            f"def backoff_{n}(): return retry_upload({n})",
            project_id="p2",
            path=f"lib/noise{n}.py",
        )
        for n in range(40)
    ]
    query, p1 = "retry upload backoff", ChunkFilter(project_id="p1")
    alone = await open_index()
    await put(alone, mine, whole_files(mine))

    async def scores(index: BM25Index) -> tuple[list[float], list[float]]:
        chunks = [hit.score for hit in await index.search(query, p1, 10)]
        files = [hit.score for hit in await index.search_whole_files(query, p1, 10)]
        return chunks, files

    before = await scores(alone)
    assert before[0]
    assert before[1]
    await put(alone, theirs, whole_files(theirs))
    assert await scores(alone) == before
    await alone.delete_project("p2")
    assert await scores(alone) == before


async def test_a_write_holds_one_projects_chunks(
    open_index: OpenIndex, corpus: list[IndexedChunk]
) -> None:
    index = await open_index()
    with pytest.raises(ValueError, match="p2"):
        await index.write("p1", [], corpus)
    with pytest.raises(ValueError, match="names its project"):
        await index.write("", [], [])
    assert await index.count("p1") == 0


async def test_rewriting_is_idempotent_and_replaces(
    open_index: OpenIndex, corpus: list[IndexedChunk], make_chunk: Any
) -> None:
    index = await open_index()
    await put(index, corpus)
    await put(index, corpus)  # redelivery
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
    await index.write("p1", ["f-src/uploads/policy.py"], [changed])
    assert "retry-policy" not in ids(
        await index.search("enforce_retry_limit", ChunkFilter("p1"), 10)
    )
    assert ids(await index.search("backoff", ChunkFilter("p1"), 10)) == ["retry-policy-v2"]


async def test_persists_across_reopen(open_index: OpenIndex, corpus: list[IndexedChunk]) -> None:
    index = await open_index()
    await put(index, corpus)
    await index.close()
    reopened = await open_index()
    assert await reopened.count("p1") == 4
    hits = await reopened.search("HttpClient", ChunkFilter("p1"), 10)
    assert ids(hits)[0] == "http-client"
    assert hits[0].chunk == corpus[2]


def _write_old_index(directory: Path, chunks: list[IndexedChunk], version: int) -> None:
    """The one index of every project as an older version wrote it: 1 = analysed fields as
    pre-tokenized strings, 2 = analysed fields as whitespace-joined terms (neither has the
    file_key column), 3 = the schema of today's project indexes."""
    import json

    import tantivy

    from locus.retrieval.adapters.tantivy_bm25 import (
        ANALYSED_FIELDS,
        KEYWORD_FIELDS,
        build_schema,
        file_key,
    )
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
    schema = build_schema() if version == 3 else builder.build()  # 3: a project index's
    directory.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(directory), reuse=False)
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
        if version == 3:
            document.add_unsigned("file_key", file_key(chunk.file_id))
        add(document, "text", chunk.text)
        add(document, "symbol", chunk.symbol_qualified_name)
        add(document, "name", chunk.symbol_name)
        add(document, "path_tokens", chunk.path)
        document.add_bytes("payload", json.dumps(chunk.to_payload()).encode())
        writer.add_document(document)
    writer.commit()
    writer.wait_merging_threads()
    (directory / "locus-schema.json").write_text(json.dumps({"version": version}))


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_one_index_of_every_project_is_split_per_project_at_open_and_searches_the_same(
    tmp_path: Path, corpus: list[IndexedChunk], version: int
) -> None:
    """An upgrade keeps what was indexed (a rescan would not resend unchanged files): the one
    index every project shared (layouts 1 to 3) is split into an index per project from its
    payloads, whole files included, and searches answer as a fresh index would."""
    import json

    from locus.retrieval.adapters.tantivy_bm25 import LAYOUT_VERSION

    queries = ["UploadClient", "retry limit", "http client", "uploads"]
    projects = [ChunkFilter(project_id="p1"), ChunkFilter(project_id="p2")]
    fresh = TantivyBM25Index(tmp_path / "fresh")
    await fresh.open()
    await put(fresh, corpus, whole_files(corpus))

    async def answers(index: TantivyBM25Index) -> list[Any]:
        return [
            (
                [(h.chunk, h.score) for h in await index.search(q, project, 10)],
                await index.search_with_files(q, project, 2, 10, 10),
                await index.search_whole_files(q, project, 10),
            )
            for q in queries
            for project in projects
        ]

    expected = await answers(fresh)
    await fresh.close()

    upgraded_dir = tmp_path / "upgraded"
    _write_old_index(upgraded_dir, corpus, version)
    (tmp_path / "upgraded-files").mkdir()  # the shared whole-file index: goes
    unfinished = tmp_path / "upgraded.migrating"  # a rewrite a crash cut short: redone
    unfinished.mkdir()
    (unfinished / "partial-segment").write_bytes(b"\0" * 64)
    upgraded = TantivyBM25Index(upgraded_dir)
    await upgraded.open()
    try:
        assert await answers(upgraded) == expected
        assert (await upgraded.count("p1"), await upgraded.count("p2")) == (4, 1)
    finally:
        await upgraded.close()
    marker = json.loads((upgraded_dir / "locus-schema.json").read_text())
    assert marker == {"version": LAYOUT_VERSION}
    assert sorted(os.listdir(tmp_path)) == ["fresh", "upgraded"]


async def test_a_split_a_crash_cut_short_is_finished_at_the_next_open(
    tmp_path: Path, corpus: list[IndexedChunk]
) -> None:
    """The per-project indexes were written and marked, then the process died before the
    swap: the next open swaps them in without reading the shared index again."""
    import shutil

    directory = tmp_path / "bm25"
    _write_old_index(directory, corpus, 2)
    first = TantivyBM25Index(directory)
    await first.open()
    await first.close()
    # Stage the finished split again and put a shared index back where it was.
    shutil.copytree(directory, tmp_path / "bm25.splitting")
    shutil.rmtree(directory)
    _write_old_index(directory, corpus[:1], 2)
    reopened = TantivyBM25Index(directory)
    await reopened.open()
    try:
        assert await reopened.count("p1") == 4
        assert ids(await reopened.search("HttpClient", ChunkFilter("p1"), 10))[0] == "http-client"
    finally:
        await reopened.close()
    assert not (tmp_path / "bm25.splitting").exists()


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
    await put(index, chunks)
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
    await put(index, spread + crowded + unrelated, whole_files(spread + crowded + unrelated))
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
    await put(index, chunks, whole_files(chunks))

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
    await index.write("p1", ["f-go"], [])
    assert await paths(project_id="p1") == {"src/one.py", "src/later.py"}
    changed = _file_of(make_chunk, "f-py", "src/one.py", ["def backoff(): pass"])
    await index.write("p1", ["f-py"], changed, whole_files(changed))
    assert await paths(project_id="p1") == {"src/later.py"}
    found = await index.search_whole_files("backoff", ChunkFilter(project_id="p1"), 10)
    assert [(f.file_id, f.chunks) for f in found] == [("f-py", 1)]


async def test_file_chunks_are_every_chunk_of_the_file(
    open_index: OpenIndex, corpus: list[IndexedChunk], make_chunk: Any
) -> None:
    index = await open_index()
    many = _file_of(make_chunk, "f-big", "src/big.py", [f"def f{n}(): pass" for n in range(30)])
    await put(index, corpus + many)
    assert sorted(c.chunk_id for c in await index.file_chunks("p1", "f-big")) == sorted(
        c.chunk_id for c in many
    )
    assert {c.text for c in await index.file_chunks("p1", "f-big")} == {c.text for c in many}
    assert await index.file_chunks("p1", "no-such-file") == []
    assert await index.file_chunks("no-such-project", "f-big") == []


async def test_whole_files_persist_across_reopen(open_index: OpenIndex, make_chunk: Any) -> None:
    chunks = _file_of(make_chunk, "f-client", "src/client.py", ["def upload(): retry()"])
    index = await open_index()
    await put(index, chunks, whole_files(chunks))
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
    await put(expected, chunks, whole_files(chunks))
    queries = ["upload", "upload max", "http client", "retry limit"]
    project = ChunkFilter(project_id="p1")
    wanted = [await expected.search_whole_files(q, project, 10) for q in queries]
    await expected.close()

    old_dir = tmp_path / "old" / "bm25"
    old = TantivyBM25Index(old_dir)
    await old.open()
    await put(old, chunks)  # chunks only, as before
    await old.close()
    shutil.rmtree(old_dir / "projects" / f"{project_key('p1')}-files")
    upgraded = TantivyBM25Index(old_dir)
    await upgraded.open()
    try:
        assert [await upgraded.search_whole_files(q, project, 10) for q in queries] == wanted
        assert wanted[1][0].path == "src/two.py"
        assert wanted[1][0].chunks == 2
    finally:
        await upgraded.close()


async def test_a_project_indexed_by_the_analyzer_before_cjk_bigrams_is_reanalysed_at_open(
    tmp_path: Path, make_chunk: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index written before CJK bigrams (analyzer 1: a run of Chinese was one term) is
    rewritten from its payloads when opened: a Chinese question then finds what a fresh index
    finds, with no rescan (unchanged files are not sent again)."""
    chunks = [make_chunk(c, text, path=path, file_id=f"f-{c}") for c, text, path in CJK_CHUNKS]
    chunks.append(make_chunk("upload", "def upload(path): return send(path)", file_id="f-up"))
    question, project = "多行输入还是不方便", ChunkFilter("p1")
    fresh = TantivyBM25Index(tmp_path / "fresh" / "bm25")
    await fresh.open()
    await put(fresh, chunks, whole_files(chunks))
    wanted = await fresh.search(question, project, 10)
    wanted_files = await fresh.search_whole_files(question, project, 10)
    await fresh.close()
    assert ids(wanted)[0] == "input-box"

    def analyzer_1(text: str) -> str:  # the old analyzer: one lowercased term per \w+ run
        return " ".join(re.findall(r"\w+", text)).lower()

    old_dir = tmp_path / "old" / "bm25"
    with monkeypatch.context() as patched:
        patched.setattr(tantivy_bm25, "indexed_terms", analyzer_1)
        old = TantivyBM25Index(old_dir)
        await old.open()
        await put(old, chunks, whole_files(chunks))
        await old.close()
    marker = old_dir / "projects" / project_key("p1") / "locus-schema.json"
    marker.write_text(json.dumps({"version": tantivy_bm25.SCHEMA_VERSION}))  # as 1 wrote it
    stale = TantivyBM25Index(old_dir)
    with monkeypatch.context() as patched:  # what searching it without the rewrite would give
        patched.setattr(tantivy_bm25, "ANALYZER_VERSION", 1)
        await stale.open()
        assert await stale.search(question, project, 10) == []
        await stale.close()
    marker.write_text(json.dumps({"version": tantivy_bm25.SCHEMA_VERSION}))

    upgraded = TantivyBM25Index(old_dir)
    await upgraded.open()
    try:
        assert await upgraded.search(question, project, 10) == wanted
        assert await upgraded.search_whole_files(question, project, 10) == wanted_files
        assert ids(await upgraded.search("upload", project, 10)) == ["upload"]
        assert json.loads(marker.read_text())["analyzer"] == tantivy_bm25.ANALYZER_VERSION
    finally:
        await upgraded.close()


async def test_a_project_rewritten_at_open_holds_up_no_other_project(
    tmp_path: Path, make_chunk: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an upgrade, the first request to a project rewrites it (seconds for a large one):
    meanwhile every other project answers, and a second request to the same project waits for
    that one opening instead of opening it again."""
    cjk = [make_chunk(c, text, path=path, file_id=f"f-{c}") for c, text, path in CJK_CHUNKS]
    upload = make_chunk("upload", "def upload(path): return send(path)", project_id="p2")
    directory = tmp_path / "bm25"
    index = TantivyBM25Index(directory)
    await index.open()
    await put(index, cjk, whole_files(cjk))
    await index.write("p2", [], [upload], whole_files([upload]))
    question, project = "多行输入还是不方便", ChunkFilter("p1")
    wanted = await index.search(question, project, 10)
    await index.close()
    marker = directory / "projects" / project_key("p1") / "locus-schema.json"
    marker.write_text(json.dumps({"version": tantivy_bm25.SCHEMA_VERSION}))  # analyzer 1's

    entered, release = threading.Event(), threading.Event()
    rewrite = tantivy_bm25._ProjectIndex._rewrite
    rewrites = []

    def held_rewrite(self: Any, *args: Any, **kwargs: Any) -> Any:
        rewrites.append(self)
        entered.set()
        assert release.wait(60)
        return rewrite(self, *args, **kwargs)

    monkeypatch.setattr(tantivy_bm25._ProjectIndex, "_rewrite", held_rewrite)
    upgraded = TantivyBM25Index(directory)
    await upgraded.open()
    try:
        first = asyncio.create_task(upgraded.search(question, project, 10))
        assert await asyncio.to_thread(entered.wait, 30)
        other = await asyncio.wait_for(upgraded.search("upload", ChunkFilter("p2"), 10), timeout=20)
        assert ids(other) == ["upload"]
        second = asyncio.create_task(upgraded.search(question, project, 10))
        await asyncio.sleep(0.2)
        assert not first.done()
        assert not second.done()
        release.set()
        assert await first == wanted
        assert await second == wanted
        assert len(rewrites) == 1
    finally:
        release.set()
        await upgraded.close()


async def test_a_rewrite_at_open_that_fails_leaves_the_project_to_open_again(
    tmp_path: Path, make_chunk: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite at open that fails (a full disk, say) fails that request with its error and
    releases the project's writers: the next request opens and rewrites the project anew."""
    cjk = [make_chunk(c, text, path=path, file_id=f"f-{c}") for c, text, path in CJK_CHUNKS]
    directory = tmp_path / "bm25"
    index = TantivyBM25Index(directory)
    await index.open()
    await put(index, cjk, whole_files(cjk))
    question, project = "多行输入还是不方便", ChunkFilter("p1")
    wanted = await index.search(question, project, 10)
    await index.close()
    marker = directory / "projects" / project_key("p1") / "locus-schema.json"
    marker.write_text(json.dumps({"version": tantivy_bm25.SCHEMA_VERSION}))  # analyzer 1's

    documents = tantivy_bm25._ProjectIndex._documents
    failures = [OSError(28, "No space left on device")]

    def failing_documents(self: Any, *args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return documents(self, *args, **kwargs)

    monkeypatch.setattr(tantivy_bm25._ProjectIndex, "_documents", failing_documents)
    upgraded = TantivyBM25Index(directory)
    await upgraded.open()
    try:
        with pytest.raises(OSError, match="No space left") as failed:
            await upgraded.search(question, project, 10)
        # The request gets the disk's error itself; ``failed`` keeps its traceback, and with it
        # the failed opening, alive while the project is opened again.
        assert failed.value.errno == 28
        assert await upgraded.search(question, project, 10) == wanted
        assert json.loads(marker.read_text())["analyzer"] == tantivy_bm25.ANALYZER_VERSION
    finally:
        await upgraded.close()


async def test_writers_beyond_the_limit_are_dropped_and_made_again(
    tmp_path: Path, make_chunk: Any
) -> None:
    """Only the projects written last keep a writer; writing to the others again works, and
    everything is searchable and persists."""
    index = TantivyBM25Index(tmp_path / "bm25", max_open_writers=1)
    await index.open()
    for round_ in range(2):
        for n in range(3):
            chunk = make_chunk(
                f"c{n}-{round_}",
                f"def handler_{round_}(): pass",
                project_id=f"p{n}",
                path=f"src/h{round_}.py",
            )
            await index.write(f"p{n}", [], [chunk], whole_files([chunk]))
    await index.close()
    reopened = TantivyBM25Index(tmp_path / "bm25", max_open_writers=1)
    await reopened.open()
    try:
        for n in range(3):
            assert await reopened.count(f"p{n}") == 2
            found = await reopened.search("handler", ChunkFilter(project_id=f"p{n}"), 10)
            assert sorted(ids(found)) == [f"c{n}-0", f"c{n}-1"]
    finally:
        await reopened.close()


async def test_a_compaction_that_fails_loses_nothing_at_the_next_write(
    tmp_path: Path, make_chunk: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction fails partway (after its first batch of files): the write that asked for it
    fails, and the next write commits none of its half-done work — every chunk is still
    there, once, and the project is compacted then."""
    monkeypatch.setattr(tantivy_bm25, "COMPACT_BATCH_FILES", 2)

    def chunk(k: int, version: int) -> IndexedChunk:
        text = f"def retry_upload_{k}(): return backoff({version})"
        return make_chunk(f"c{k}", text, path=f"src/c{k}.py")

    documents, rewrite = tantivy_bm25._ProjectIndex._documents, tantivy_bm25._ProjectIndex._rewrite
    failing = threading.Event()  # set while a rewrite runs
    calls: list[int] = []

    def failing_rewrite(self: Any, *args: Any, **kwargs: Any) -> Any:
        failing.set()
        try:
            return rewrite(self, *args, **kwargs)
        finally:
            failing.clear()

    def documents_failing_in_compaction(self: Any, *args: Any, **kwargs: Any) -> Any:
        if failing.is_set():
            calls.append(1)
            if len(calls) == 2:  # the second batch of the rewrite
                raise OSError(28, "No space left on device")
        return documents(self, *args, **kwargs)

    monkeypatch.setattr(tantivy_bm25._ProjectIndex, "_rewrite", failing_rewrite)
    monkeypatch.setattr(tantivy_bm25._ProjectIndex, "_documents", documents_failing_in_compaction)
    index = TantivyBM25Index(tmp_path / "bm25", compact_deleted_share=0.2)
    await index.open()
    try:
        first = [chunk(k, 0) for k in range(6)]
        await index.write("p1", [], first, whole_files(first))
        replaced = chunk(0, 1)
        await index.write("p1", ["f-src/c0.py"], [replaced], whole_files([replaced]))  # 1 of 7
        replaced = chunk(1, 1)
        with pytest.raises(OSError, match="No space left"):  # 2 of 8 deleted: compacted
            await index.write("p1", ["f-src/c1.py"], [replaced], whole_files([replaced]))
        assert len(calls) == 2
        await index.write("p1", ["f-src/c5.py"], [chunk(5, 1)], whole_files([chunk(5, 1)]))
        assert await index.count("p1") == 6
        found = await index.search("retry upload backoff", ChunkFilter("p1"), 20)
        assert sorted(ids(found)) == [f"c{k}" for k in range(6)]
        files = await index.search_whole_files("retry upload backoff", ChunkFilter("p1"), 20)
        assert len(files) == 6
    finally:
        await index.close()


@pytest.mark.parametrize("batch_files", [tantivy_bm25.COMPACT_BATCH_FILES, 5])
async def test_a_project_rewritten_often_scores_as_a_fresh_index_once_deletions_pass_the_share(
    tmp_path: Path, make_chunk: Any, monkeypatch: pytest.MonkeyPatch, batch_files: int
) -> None:
    """tantivy counts replaced documents in the statistics until a merge: a project whose files
    were rewritten scores their words differently from a fresh index of the same documents.
    Past the allowed share of deleted documents the project is compacted and scores exactly as
    the fresh index (whether its 13 files are rewritten in one batch or in three)."""
    monkeypatch.setattr(tantivy_bm25, "COMPACT_BATCH_FILES", batch_files)

    def chunk(k: int, version: int) -> IndexedChunk:
        text = f"def retry_upload_{k}(): return backoff({version}) + helper_{k}()"
        return make_chunk(f"c{k}", text, path=f"src/c{k}.py")

    def state(rewritten: int) -> list[IndexedChunk]:
        return [chunk(k, 1 if k < rewritten else 0) for k in range(13)]

    query, p1 = "retry upload backoff helper", ChunkFilter(project_id="p1")

    async def scores(index: BM25Index) -> tuple[list[float], list[float]]:
        chunks = [hit.score for hit in await index.search(query, p1, 20)]
        files = [hit.score for hit in await index.search_whole_files(query, p1, 20)]
        return chunks, files

    async def fresh(rewritten: int) -> tuple[list[float], list[float]]:
        index = TantivyBM25Index(tmp_path / f"fresh-{rewritten}")
        await index.open()
        try:
            await index.write("p1", [], state(rewritten), whole_files(state(rewritten)))
            return await scores(index)
        finally:
            await index.close()

    often = TantivyBM25Index(tmp_path / "often", compact_deleted_share=0.2)
    await often.open()
    try:
        await often.write("p1", [], state(0), whole_files(state(0)))
        # Each write replaces one more file of the first scan's segment: 1 of 14 documents of
        # either index deleted, 2 of 15, 3 of 16 (19 %, kept), then 4 of 17 (24 %): compacted.
        for k in range(3):
            await often.write("p1", [f"f-src/c{k}.py"], [chunk(k, 1)], whole_files([chunk(k, 1)]))
        assert await scores(often) != await fresh(3)
        await often.write("p1", ["f-src/c3.py"], [chunk(3, 1)], whole_files([chunk(3, 1)]))
        assert await scores(often) == await fresh(4)
        assert await often.count("p1") == 13
    finally:
        await often.close()
