"""The retrieval service end to end on real components: nats-server, the service (built
in-process), tantivy, qdrant-edge, the MiniLM model; files.parsed in, index.updated and Search
over gRPC out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from locus.database import Database
from locus.retrieval.adapters.store import RetrievalStore
from locus.v1 import common_pb2, events_pb2, retrieval_pb2

pytestmark = pytest.mark.integration

PROJECT = "p_uploads"
FILES = ["uploads/client.py", "uploads/policy.py", "uploads/errors.py", "storage/blob_store.go"]


def search(
    query: str,
    mode: int = retrieval_pb2.SEARCH_MODE_UNSPECIFIED,
    project_id: str = PROJECT,
    **options: Any,
) -> retrieval_pb2.SearchRequest:
    filters = retrieval_pb2.SearchFilters(
        project_id=project_id,
        languages=options.pop("languages", []),
        path_prefix=options.pop("path_prefix", ""),
        subsystem=options.pop("subsystem", ""),
        snapshot_id=options.pop("snapshot_id", ""),
    )
    return retrieval_pb2.SearchRequest(query=query, mode=mode, filters=filters, **options)


def paths(response: retrieval_pb2.SearchResponse) -> list[str]:
    return [hit.chunk.location.relative_path for hit in response.hits]


async def index_fixture_repo(harness: Any, make_events: Any, job_id: str = "job_1") -> None:
    """Publish the fixture files and wait until every one is searchable and embedded."""
    for path in FILES:
        await harness.publish_file(make_events(path, job_id=job_id, snapshot_seq=1))
    await harness.updates.wait_for(
        lambda seen: (
            len(harness.reported(job_id)) == len(FILES)
            and len(harness.reported(job_id, "vectors")) == len(FILES)
        )
    )


async def test_scan_is_indexed_reported_and_searchable(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    await index_fixture_repo(harness, make_events)

    for stage in ("retrieval", "vectors"):
        reported = harness.reported("job_1", stage)
        assert set(reported) == {file_id(path) for path in FILES}
        assert {f.status for f in reported.values()} == {events_pb2.INDEX_STATUS_INDEXED}
    update_ids = {m.headers["Nats-Msg-Id"] for m in harness.updates.messages}
    assert all(
        i.startswith(("index.updated:retrieval:job_1:", "index.updated:vectors:job_1:"))
        for i in update_ids
    )
    # Reports are batched: fewer index.updated messages than files at each stage.
    assert len(harness.updates.messages) < 2 * len(FILES)
    assert {u.stage for u in harness.updates.index_updates()} == {"retrieval", "vectors"}

    # An identifier finds its definition, with the chunk's location.
    bm25 = await harness.stub.Search(search("UploadClient", retrieval_pb2.SEARCH_MODE_BM25))
    assert bm25.mode == retrieval_pb2.SEARCH_MODE_BM25
    top = bm25.hits[0]
    assert top.chunk.location.relative_path == "uploads/client.py"
    assert "class UploadClient" in top.chunk.text
    assert top.chunk.location.start_line <= 23 <= top.chunk.location.end_line
    assert top.chunk.location.project_id == PROJECT
    assert top.chunk.location.language == "python"
    assert (top.lexical_rank, top.vector_rank) == (1, 0)
    assert top.lexical_score > 0

    # The file list reaches past the chunk list: with one chunk asked for, every file that
    # matches is still ranked, best first by its chunks' BM25, and no file twice.
    listed = await harness.stub.Search(
        search("upload retry attempts", retrieval_pb2.SEARCH_MODE_BM25, top_k=1, top_files=10)
    )
    assert len(listed.hits) == 1
    files = [f.relative_path for f in listed.files]
    assert len(files) == len(set(files)) >= 2
    assert listed.hits[0].chunk.location.relative_path in files
    assert [f.rank for f in listed.files] == list(range(1, len(files) + 1))
    assert [f.score for f in listed.files] == sorted((f.score for f in listed.files), reverse=True)
    assert all(f.best_score <= f.score and f.chunks >= 1 for f in listed.files)
    assert not (await harness.stub.Search(search("upload", top_k=1))).files

    # Whole files: one document per file, so every file that has the words is listed once,
    # ranked by its own BM25, the path included in what is matched.
    whole = await harness.stub.Search(
        search("upload retry attempts", retrieval_pb2.SEARCH_MODE_BM25, top_whole_files=10)
    )
    listed_whole = [f.relative_path for f in whole.whole_files]
    assert len(listed_whole) == len(set(listed_whole)) >= 2
    assert set(listed_whole) <= set(FILES)
    assert [f.rank for f in whole.whole_files] == list(range(1, len(listed_whole) + 1))
    assert [f.score for f in whole.whole_files] == sorted(
        (f.score for f in whole.whole_files), reverse=True
    )
    assert all(f.chunks >= 1 and f.best_score == f.score for f in whole.whole_files)
    assert {f.file_id for f in whole.whole_files} <= {file_id(path) for path in FILES}
    by_path = await harness.stub.Search(search("storage", top_whole_files=5))
    assert [f.relative_path for f in by_path.whole_files][:1] == ["storage/blob_store.go"]
    assert not (await harness.stub.Search(search("upload", top_k=1))).whole_files
    # More whole-file queries (a question's parts): one list each, in order, each the list
    # that query alone gets.
    parted = await harness.stub.Search(
        search(
            "upload retry attempts",
            retrieval_pb2.SEARCH_MODE_BM25,
            top_whole_files=10,
            whole_file_queries=["storage", "upload retry attempts"],
        )
    )
    assert [listed.query for listed in parted.whole_file_lists] == [
        "storage",
        "upload retry attempts",
    ]
    assert list(parted.whole_file_lists[0].files) == list(
        (await harness.stub.Search(search("storage", top_whole_files=10))).whole_files
    )
    assert list(parted.whole_file_lists[1].files) == list(parted.whole_files)
    assert not (await harness.stub.Search(search("upload", top_k=1))).whole_file_lists

    # Plain language, by meaning only.
    vector = await harness.stub.Search(
        search("give up when every attempt failed", retrieval_pb2.SEARCH_MODE_VECTOR, top_k=3)
    )
    assert vector.hits[0].vector_rank == 1
    assert vector.hits[0].lexical_rank == 0
    assert vector.hits[0].vector_score > 0.2
    assert "uploads/errors.py" in paths(vector) or "uploads/client.py" in paths(vector)

    # Hybrid (the default) fuses both lists with RRF (k = 60).
    hybrid = await harness.stub.Search(search("retry limit for uploads", top_k=5))
    assert hybrid.mode == retrieval_pb2.SEARCH_MODE_HYBRID
    assert hybrid.hits[0].chunk.location.relative_path in {"uploads/policy.py", "uploads/client.py"}
    both = [h for h in hybrid.hits if h.lexical_rank and h.vector_rank]
    assert both, "hybrid should find chunks in both lists"
    first = both[0]
    assert first.score == pytest.approx(
        1 / (60 + first.lexical_rank) + 1 / (60 + first.vector_rank)
    )
    assert [h.score for h in hybrid.hits] == sorted((h.score for h in hybrid.hits), reverse=True)

    # Filters.
    go = await harness.stub.Search(search("store blobs on disk", languages=["go"]))
    assert set(paths(go)) == {"storage/blob_store.go"}
    prefixed = await harness.stub.Search(search("upload", path_prefix="uploads/pol"))
    assert set(paths(prefixed)) == {"uploads/policy.py"}
    assert (await harness.stub.Search(search("upload", subsystem="uploads"))).hits
    assert not (await harness.stub.Search(search("upload", subsystem="billing"))).hits


@pytest.mark.parametrize(
    ("request_", "code", "message"),
    [
        (search(""), grpc.StatusCode.INVALID_ARGUMENT, "must not be empty"),
        (search("x" * 16001), grpc.StatusCode.INVALID_ARGUMENT, "limit is 16000"),
        (search("upload", project_id=""), grpc.StatusCode.INVALID_ARGUMENT, "project_id"),
        (search("upload", mode=42), grpc.StatusCode.INVALID_ARGUMENT, "unknown search mode"),
        (search("upload", top_k=1000), grpc.StatusCode.INVALID_ARGUMENT, "top_k"),
        (search("upload", rrf_k=-1), grpc.StatusCode.INVALID_ARGUMENT, "rrf_k"),
        (search("upload", top_files=5000), grpc.StatusCode.INVALID_ARGUMENT, "top_files"),
        (
            search("upload", top_whole_files=-1),
            grpc.StatusCode.INVALID_ARGUMENT,
            "top_whole_files must not be negative",
        ),
        (
            search("upload", top_whole_files=1001),
            grpc.StatusCode.INVALID_ARGUMENT,
            "top_whole_files 1001 is above the maximum 1000",
        ),
        (
            search("upload", whole_file_queries=["retry"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "whole_file_queries needs top_whole_files",
        ),
        (
            search("upload", top_whole_files=5, whole_file_queries=["retry", " "]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "whole_file_queries[1] must not be empty",
        ),
        (
            search("upload", top_whole_files=5, whole_file_queries=["retry"] * 9),
            grpc.StatusCode.INVALID_ARGUMENT,
            "at most 8 can be searched at once",
        ),
        (
            search("upload", top_whole_files=5, whole_file_queries=["x" * 16001]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "whole_file_queries[0] is 16001 characters long; the limit is 16000",
        ),
        (
            search("upload", project_id="p_new"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "project p_new has no indexed chunks yet; run a scan",
        ),
    ],
)
async def test_invalid_searches_are_refused(
    harness: Any, request_: retrieval_pb2.SearchRequest, code: grpc.StatusCode, message: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await harness.stub.Search(request_)
    assert caught.value.code() == code
    assert message in (caught.value.details() or "")


async def test_symbols_are_scored_by_their_best_chunks_vector(
    harness: Any, make_events: Any
) -> None:
    await index_fixture_repo(harness, make_events)
    question = "how many times is a failed upload retried"
    # Every chunk's vector score, from a vector search that reaches all of them.
    everything = await harness.stub.Search(
        search(question, retrieval_pb2.SEARCH_MODE_VECTOR, top_k=100, top_k_vector=500)
    )
    best: dict[str, float] = {}
    for hit in everything.hits:
        node_id = hit.chunk.symbol_node_id
        if node_id:
            best[node_id] = max(hit.vector_score, best.get(node_id, -1.0))
    assert len(best) >= 4
    asked = [*sorted(best)[:-1], "n_unknown"]  # one symbol left out, one that does not exist

    scored = await harness.stub.ScoreSymbols(
        retrieval_pb2.ScoreSymbolsRequest(project_id=PROJECT, query=question, symbol_node_ids=asked)
    )
    got = {s.node_id: s.similarity for s in scored.symbols}
    assert set(got) == set(asked) - {"n_unknown"}  # the unasked symbol is not scored either
    for node_id, similarity in got.items():
        assert similarity == pytest.approx(best[node_id], abs=1e-5)
    values = [s.similarity for s in scored.symbols]
    assert values == sorted(values, reverse=True)
    assert scored.chunks_scored >= len(got)

    # A project without vectors scores nothing; it is not an error.
    empty = await harness.stub.ScoreSymbols(
        retrieval_pb2.ScoreSymbolsRequest(project_id="p_new", query=question, symbol_node_ids=asked)
    )
    assert not empty.symbols


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (retrieval_pb2.ScoreSymbolsRequest(project_id=PROJECT, query=" "), "must not be empty"),
        (retrieval_pb2.ScoreSymbolsRequest(query="upload"), "project_id is required"),
        (
            retrieval_pb2.ScoreSymbolsRequest(
                project_id=PROJECT, query="upload", symbol_node_ids=[f"n_{i}" for i in range(1001)]
            ),
            "1001 symbol_node_ids given; at most 1000",
        ),
        (
            retrieval_pb2.ScoreSymbolsRequest(project_id=PROJECT, query="x" * 16001),
            "limit is 16000",
        ),
    ],
)
async def test_invalid_symbol_scores_are_refused(
    harness: Any, request_: retrieval_pb2.ScoreSymbolsRequest, message: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await harness.stub.ScoreSymbols(request_)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (caught.value.details() or "")


async def test_deletes_retract_and_rescans_reuse_cached_embeddings(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    await index_fixture_repo(harness, make_events)
    stats = harness.runtime.indexer.stats
    lane = harness.runtime.vectors_lane.stats
    embedded_after_first_scan = lane.vectors_embedded
    assert embedded_after_first_scan > 0

    # A second scan: policy.py deleted, client.py re-parsed unchanged under a newer snapshot.
    await harness.publish_file(
        make_events("uploads/policy.py", job_id="job_2", snapshot_seq=2, change=3)
    )
    client_again = make_events("uploads/client.py", job_id="job_2", snapshot_seq=2, change=2)
    await harness.publish_file(client_again)
    await harness.updates.wait_for(
        lambda seen: (
            len(harness.reported("job_2")) == 2 and len(harness.reported("job_2", "vectors")) == 2
        )
    )
    deleted = harness.reported("job_2")[file_id("uploads/policy.py")]
    assert deleted.change_type == common_pb2.CHANGE_TYPE_DELETED
    assert deleted.status == events_pb2.INDEX_STATUS_INDEXED

    for mode in (retrieval_pb2.SEARCH_MODE_BM25, retrieval_pb2.SEARCH_MODE_VECTOR):
        found = await harness.stub.Search(search("enforce_retry_limit", mode, top_k=50))
        assert "uploads/policy.py" not in paths(found)
    assert lane.vectors_embedded == embedded_after_first_scan  # nothing re-embedded
    assert lane.vectors_from_cache >= len(client_again[0].chunks)
    hit = (await harness.stub.Search(search("UploadClient", retrieval_pb2.SEARCH_MODE_BM25))).hits
    assert hit[0].chunk.location.snapshot_id == "snap_2"
    assert sum(1 for h in hit if "class UploadClient" in h.chunk.text) == 1  # replaced, not added

    # snapshot_id filter: as of snapshot 1 nothing of the re-indexed client.py is valid.
    as_of_1 = await harness.stub.Search(search("UploadClient", snapshot_id="snap_1", top_k=50))
    assert "uploads/client.py" not in paths(as_of_1)

    # A stale event (older snapshot, other content) is ignored and reported skipped.
    stale = make_events(
        "uploads/client.py", job_id="job_old", snapshot_seq=1, data=b"class StaleThing:\n    pass\n"
    )
    await harness.publish_file(stale)
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_old")) == 1)
    assert harness.reported("job_old")[file_id("uploads/client.py")].status == (
        events_pb2.INDEX_STATUS_SKIPPED
    )
    assert not (
        await harness.stub.Search(search("StaleThing", retrieval_pb2.SEARCH_MODE_BM25))
    ).hits

    # Redelivering the same parts (new message ids) writes nothing and embeds nothing.
    chunks_written = stats.chunks_written
    for event in client_again:
        await harness.publish(event, f"redelivery:{event.part_index}")
    await harness.updates.wait_for(lambda seen: stats.parts_duplicate >= len(client_again))
    assert stats.chunks_written == chunks_written
    assert lane.vectors_embedded == embedded_after_first_scan


async def test_a_multi_part_file_is_reported_once_all_parts_are_in(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    parts = make_events("uploads/client.py", job_id="job_parts", snapshot_seq=1, parts=3)
    assert all(p.chunks for p in parts)
    await harness.publish_file([parts[2], parts[1]])  # out of order, one part missing
    await harness.updates.wait_for(lambda seen: harness.runtime.indexer.stats.parts >= 2)
    assert harness.reported("job_parts") == {}
    await harness.publish_file([parts[0]])
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_parts")) == 1)
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_parts", "vectors")) == 1)
    # Vector search ranks every chunk of the project: all three parts' chunks are there.
    found = await harness.stub.Search(search("upload", retrieval_pb2.SEARCH_MODE_VECTOR, top_k=50))
    assert {h.chunk.chunk_id for h in found.hits} == {c.chunk_id for p in parts for c in p.chunks}
    assert harness.runtime.indexer.stats.files_reported == 1
    # Its whole-file document was made from all three parts, though two came in earlier.
    whole = await harness.stub.Search(search("upload", top_whole_files=5))
    assert [(f.relative_path, f.chunks) for f in whole.whole_files] == [
        ("uploads/client.py", sum(len(p.chunks) for p in parts))
    ]


async def test_malformed_files_parsed_goes_to_the_dead_letter_subject(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    await harness.publish(b"\xff\x00 not a protobuf", "garbage-1")
    no_file = events_pb2.FilesParsed(job_id="job_bad", project_id=PROJECT)
    await harness.publish(no_file, "no-file-1")
    bad_part = make_events("uploads/errors.py", job_id="job_bad", snapshot_seq=1)[0]
    bad_part.part_index = 5
    await harness.publish(bad_part, "bad-part-1")
    await harness.dead_letters.wait_for(lambda seen: len(seen.messages) == 3)
    assert {m.subject for m in harness.dead_letters.messages} == {"locus.v1.dlq.files.parsed"}
    letters = [events_pb2.DeadLetter.FromString(m.data) for m in harness.dead_letters.messages]
    assert {letter.consumer for letter in letters} == {"retrieval"}
    assert any("without file.file_id" in letter.error for letter in letters)
    # The file that could be named is reported failed, so its scan job can still complete.
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_bad")) == 1)
    failed = harness.reported("job_bad")[file_id("uploads/errors.py")]
    assert failed.status == events_pb2.INDEX_STATUS_FAILED
    assert "part_index 5" in failed.error


async def test_files_are_searchable_before_their_vectors_are_in(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    harness.runtime.vectors_lanes.pause()
    for path in FILES:
        await harness.publish_file(make_events(path, job_id="job_1", snapshot_seq=1))
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1")) == len(FILES))
    assert harness.reported("job_1", "vectors") == {}

    # Searchable at once: BM25 and hybrid answer from the lexical list alone.
    bm25 = await harness.stub.Search(search("UploadClient", retrieval_pb2.SEARCH_MODE_BM25))
    assert bm25.hits[0].chunk.location.relative_path == "uploads/client.py"
    hybrid = await harness.stub.Search(search("UploadClient", top_k=5))
    assert hybrid.hits
    assert all(h.vector_rank == 0 for h in hybrid.hits)
    vector = await harness.stub.Search(search("upload", retrieval_pb2.SEARCH_MODE_VECTOR))
    assert not vector.hits

    harness.runtime.vectors_lanes.resume()
    await harness.updates.wait_for(
        lambda seen: len(harness.reported("job_1", "vectors")) == len(FILES)
    )
    hybrid = await harness.stub.Search(search("UploadClient", top_k=5))
    assert any(h.vector_rank for h in hybrid.hits)


async def test_the_vectors_lane_waits_until_the_searchable_path_is_quiet(
    harness_factory: Any, make_events: Any
) -> None:
    """Searchable first: no file is embedded while files are being made searchable (nor in
    the quiet period after), and then every one is."""
    harness = await harness_factory(vectors_yield_quiet_seconds=3.0)
    for path in FILES:
        await harness.publish_file(make_events(path, job_id="job_1", snapshot_seq=1))
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1")) == len(FILES))
    lane = harness.runtime.vectors_lane.stats
    assert lane.vectors_embedded == 0
    assert harness.reported("job_1", "vectors") == {}

    await harness.updates.wait_for(
        lambda seen: len(harness.reported("job_1", "vectors")) == len(FILES)
    )
    assert lane.vectors_embedded > 0
    assert lane.yielded_seconds > 1.0


async def test_the_vectors_lane_waits_while_searches_keep_coming(
    harness_factory: Any, make_events: Any
) -> None:
    """Queries come before background embedding: while searches arrive within the quiet
    period nothing is embedded; once they stop, the files get their vectors."""
    harness = await harness_factory(vectors_yield_quiet_seconds=2.0)
    for path in FILES:
        await harness.publish_file(make_events(path, job_id="job_1", snapshot_seq=1))
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1")) == len(FILES))
    lane = harness.runtime.vectors_lane.stats
    for _ in range(10):  # 4 s of searches, one every 0.4 s: longer than the quiet period
        response = await harness.stub.Search(search("UploadClient"))
        assert response.hits
        await asyncio.sleep(0.4)
    assert lane.vectors_embedded == 0
    await harness.updates.wait_for(
        lambda seen: len(harness.reported("job_1", "vectors")) == len(FILES)
    )
    assert lane.yielded_seconds > 3.0


async def test_the_vectors_lane_embeds_source_before_tests_and_docs(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    source = make_events("uploads/client.py", job_id="job_1", snapshot_seq=1)
    test = make_events(
        "tests/test_client.py",
        job_id="job_1",
        snapshot_seq=1,
        data=b"def test_upload_retries():\n    assert UploadClient().retries == 3\n",
    )
    docs = make_events(
        "docs/conf.py", job_id="job_1", snapshot_seq=1, data=b"project = 'uploads'\n"
    )
    harness.runtime.vectors_lanes.pause()
    for events in (docs, test, source):  # least valuable first
        await harness.publish_file(events)
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1")) == 3)
    harness.runtime.vectors_lanes.resume()
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1", "vectors")) == 3)
    order = [
        f.file_id for u in harness.updates.index_updates() if u.stage == "vectors" for f in u.files
    ]
    assert order == [source[0].file.file_id, test[0].file.file_id, docs[0].file.file_id]


async def test_excluded_value_classes_are_searchable_without_vectors(
    harness_factory: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    harness = await harness_factory(vector_classes="source")
    test = make_events(
        "tests/test_client.py",
        job_id="job_1",
        snapshot_seq=1,
        data=b"def test_upload_retries():\n    assert UploadClient().retries == 3\n",
    )
    await harness.publish_file(test)
    await harness.publish_file(make_events("uploads/client.py", job_id="job_1", snapshot_seq=1))
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1", "vectors")) == 2)
    skipped = harness.reported("job_1", "vectors")[file_id("tests/test_client.py")]
    assert skipped.status == events_pb2.INDEX_STATUS_SKIPPED
    assert "test files are not wanted" in skipped.error
    bm25 = await harness.stub.Search(search("test_upload_retries", retrieval_pb2.SEARCH_MODE_BM25))
    assert bm25.hits[0].chunk.location.relative_path == "tests/test_client.py"
    vector = await harness.stub.Search(search("upload", retrieval_pb2.SEARCH_MODE_VECTOR, top_k=50))
    assert {h.chunk.location.relative_path for h in vector.hits} == {"uploads/client.py"}


async def test_a_malformed_vectors_request_is_dead_lettered_alone(
    harness: Any, make_events: Any, file_id: Callable[[str], str]
) -> None:
    harness.runtime.vectors_lanes.pause()
    for path in FILES[:2]:
        await harness.publish_file(make_events(path, job_id="job_1", snapshot_seq=1))
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1")) == 2)
    bad = events_pb2.VectorsRequested(
        part=make_events("uploads/errors.py", job_id="job_1", snapshot_seq=1)[0],
        value_class="source",
    )
    bad.part.part_index = 7
    ack = await harness.nats.jetstream().publish(
        "locus.v1.vectors.requested.source",
        bad.SerializeToString(),
        headers={"Nats-Msg-Id": "bad-vectors-1"},
    )
    assert ack.stream
    harness.runtime.vectors_lanes.resume()  # the bad one rides in a batch with the two good ones
    await harness.dead_letters.wait_for(lambda seen: len(seen.messages) == 1)
    letter = events_pb2.DeadLetter.FromString(harness.dead_letters.messages[0].data)
    assert harness.dead_letters.messages[0].subject == "locus.v1.dlq.vectors.requested.source"
    assert "part_index 7" in letter.error
    await harness.updates.wait_for(lambda seen: len(harness.reported("job_1", "vectors")) == 3)
    embedded = harness.reported("job_1", "vectors")
    assert embedded[file_id("uploads/errors.py")].status == events_pb2.INDEX_STATUS_FAILED
    assert {embedded[file_id(p)].status for p in FILES[:2]} == {events_pb2.INDEX_STATUS_INDEXED}


async def test_a_restart_while_the_lane_is_busy_embeds_every_chunk_once(
    harness_factory: Any, make_events: Any, tmp_path: Any
) -> None:
    """The lane is stopped halfway (its queue stays in JetStream); a new instance on the
    same data finishes the work from the cache and the queue, embedding nothing twice."""
    data_dir = tmp_path / "restart"
    first = await harness_factory(data_dir=data_dir, vectors_fetch_batch=1)
    all_events = [make_events(path, job_id="job_1", snapshot_seq=1) for path in FILES]
    distinct = {c.content_sha256 for events in all_events for e in events for c in e.chunks}
    for events in all_events:
        await first.publish_file(events)
    await first.updates.wait_for(lambda seen: first.runtime.vectors_lane.stats.files_embedded >= 1)
    first.runtime.vectors_lanes.pause()  # no new batch; the one in hand is cut by the stop
    await first.close()
    assert first.runtime.vectors_lane.stats.files_embedded < len(FILES)
    # What the first instance embedded and kept is what its cache holds: a stop that lands
    # while a sub-batch is being saved keeps it without the counter seeing it.
    kept = RetrievalStore(Database(f"sqlite+aiosqlite:///{(data_dir / 'retrieval.db').resolve()}"))
    await kept.initialize()
    model = first.runtime.vectors_lane.model_id
    embedded_before = len(await kept.cached_vectors(model, sorted(distinct)))
    await kept.close()
    assert embedded_before >= first.runtime.vectors_lane.stats.vectors_embedded

    second = await harness_factory(data_dir=data_dir, vectors_fetch_batch=1)
    await second.updates.wait_for(
        lambda seen: (
            second.runtime.vectors_lane.stats.files_embedded
            + first.runtime.vectors_lane.stats.files_embedded
            >= len(FILES)
        )
    )
    lane = second.runtime.vectors_lane.stats
    assert embedded_before + lane.vectors_embedded == len(distinct)  # each content once
    assert lane.vectors_from_cache + lane.vectors_embedded >= len(distinct) - embedded_before
    found = await second.stub.Search(search("upload", retrieval_pb2.SEARCH_MODE_VECTOR, top_k=100))
    assert {h.chunk.chunk_id for h in found.hits} == {
        c.chunk_id for events in all_events for e in events for c in e.chunks
    }
