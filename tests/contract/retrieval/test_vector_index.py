"""The VectorIndex contract, run against every adapter: qdrant-edge always, qdrant-client in
local mode always, and qdrant-client against a server when LOCUS_TEST_QDRANT_URL is set."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from locus.retrieval.adapters.edge_vectors import EdgeVectorIndex
from locus.retrieval.adapters.qdrant_client_vectors import QdrantClientVectorIndex
from locus.retrieval.domain.errors import IndexIncompatible
from locus.retrieval.domain.model import ChunkFilter, EmbeddedChunk, IndexedChunk
from locus.retrieval.domain.ports import VectorIndex

pytestmark = pytest.mark.contract

QDRANT_URL = os.environ.get("LOCUS_TEST_QDRANT_URL", "")
DIMENSION = 16
OpenIndex = Callable[..., Awaitable[VectorIndex]]


@pytest.fixture(
    params=[
        "qdrant-edge",
        "qdrant-client-local",
        pytest.param(
            "qdrant-client-server",
            marks=pytest.mark.skipif(
                not QDRANT_URL,
                reason="qdrant-client against a server: set LOCUS_TEST_QDRANT_URL to run",
            ),
        ),
    ]
)
async def open_index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenIndex]:
    """Opens the adapter on the same storage each time it is called (for reopen tests)."""
    opened: list[VectorIndex] = []
    collection = f"locus-test-{uuid.uuid4().hex[:12]}"

    async def open_one(dimension: int = DIMENSION) -> VectorIndex:
        index: Any
        if request.param == "qdrant-edge":
            index = EdgeVectorIndex(tmp_path / "edge", dimension, optimize_every_points=4)
        elif request.param == "qdrant-client-local":
            index = QdrantClientVectorIndex(collection, dimension, local_path=tmp_path / "local")
        else:
            index = QdrantClientVectorIndex(collection, dimension, url=QDRANT_URL)
        await index.open()
        opened.append(index)
        return index  # type: ignore[no-any-return]

    yield open_one
    for index in opened:
        await index.close()
    if request.param == "qdrant-client-server":
        from qdrant_client import AsyncQdrantClient

        client = AsyncQdrantClient(url=QDRANT_URL)
        await client.delete_collection(collection)
        await client.close()


def unit(seed: int) -> list[float]:
    vector = np.random.default_rng(seed).normal(size=DIMENSION)
    return (vector / np.linalg.norm(vector)).tolist()  # type: ignore[no-any-return]


def near(seed: int, noise: float = 0.05) -> list[float]:
    """A vector close to ``unit(seed)``."""
    vector = np.asarray(unit(seed)) + noise * np.asarray(unit(seed + 1000))
    return (vector / np.linalg.norm(vector)).tolist()  # type: ignore[no-any-return]


def ids(hits: list[Any]) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


@pytest.fixture
def corpus(make_chunk: Any) -> list[EmbeddedChunk]:
    chunks: list[IndexedChunk] = [
        make_chunk("a1", "upload", path="src/uploads/client.py"),
        make_chunk("a2", "download", path="src/uploads/client.py"),
        make_chunk("b1", "retry", path="src/uploads/policy.py", language="python"),
        make_chunk("c1", "connect", path="lib/net.go", language="go", subsystem="tools"),
        make_chunk("d1", "later", path="src/later.py", snapshot_seq=5),
        make_chunk("x1", "elsewhere", project_id="p2", path="src/x.py", file_id="f-p2-x"),
    ]
    return [EmbeddedChunk(chunk, unit(seed)) for seed, chunk in enumerate(chunks)]


async def test_nearest_first_with_payload(
    open_index: OpenIndex, corpus: list[EmbeddedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    hits = await index.search(near(2), ChunkFilter("p1"), 3)
    assert ids(hits)[0] == "b1"
    assert hits[0].chunk == corpus[2].chunk
    assert hits[0].score > 0.9
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 3


async def test_filters(open_index: OpenIndex, corpus: list[EmbeddedChunk]) -> None:
    index = await open_index()
    await index.write([], corpus)
    query = near(0)
    assert ids(await index.search(query, ChunkFilter("p2"), 10)) == ["x1"]
    assert ids(await index.search(query, ChunkFilter("p1", languages=("go",)), 10)) == ["c1"]
    assert ids(await index.search(query, ChunkFilter("p1", subsystem="tools"), 10)) == ["c1"]
    assert set(ids(await index.search(query, ChunkFilter("p1", path_prefix="src/up"), 10))) == {
        "a1",
        "a2",
        "b1",
    }
    assert "d1" not in ids(await index.search(query, ChunkFilter("p1", max_snapshot_seq=4), 10))
    assert len(await index.search(query, ChunkFilter("p1"), 10)) == 5
    # The chunks of given symbols (ScoreSymbols): only theirs, in this project, nearest first.
    of_symbols = ChunkFilter("p1", symbol_node_ids=("n-b1", "n-a2", "n-x1"))
    assert ids(await index.search(near(2), of_symbols, 10)) == ["b1", "a2"]


async def test_removing_a_file_removes_all_its_chunks(
    open_index: OpenIndex, corpus: list[EmbeddedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.write(["f-src/uploads/client.py"], [])
    assert await index.count("p1") == 3
    assert await index.count("p2") == 1
    assert not {"a1", "a2"} & set(ids(await index.search(near(0), ChunkFilter("p1"), 10)))


async def test_deleting_a_project_removes_its_points_only(
    open_index: OpenIndex, corpus: list[EmbeddedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.delete_project("p1")
    assert await index.count("p1") == 0
    assert await index.search(near(0), ChunkFilter("p1"), 10) == []
    assert ids(await index.search(near(0), ChunkFilter("p2"), 10)) == ["x1"]
    await index.delete_project("p1")  # a redelivered deletion finds nothing and succeeds
    await index.delete_project("never-indexed")
    assert await index.count("p2") == 1


async def test_rewriting_is_idempotent_and_replaces(
    open_index: OpenIndex, corpus: list[EmbeddedChunk], make_chunk: Any
) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.write([], corpus)  # redelivery
    assert await index.count("p1") == 5
    replacement = EmbeddedChunk(
        make_chunk("b2", "backoff", path="src/uploads/policy.py", snapshot_seq=2), unit(42)
    )
    await index.write(["f-src/uploads/policy.py"], [replacement])
    assert await index.count("p1") == 5
    found = ids(await index.search(near(2), ChunkFilter("p1"), 10))
    assert "b1" not in found
    assert ids(await index.search(near(42), ChunkFilter("p1"), 1)) == ["b2"]


async def test_persists_across_reopen(open_index: OpenIndex, corpus: list[EmbeddedChunk]) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.close()
    reopened = await open_index()
    assert await reopened.count("p1") == 5
    hits = await reopened.search(near(3), ChunkFilter("p1"), 1)
    assert hits[0].chunk == corpus[3].chunk


async def test_refuses_vectors_of_another_size(
    open_index: OpenIndex, corpus: list[EmbeddedChunk]
) -> None:
    index = await open_index()
    await index.write([], corpus)
    await index.close()
    with pytest.raises(IndexIncompatible):
        await open_index(DIMENSION * 2)
