"""The Embedder contract, run against every adapter with the real all-MiniLM-L6-v2: onnxruntime,
sentence-transformers (torch), and the OpenAI-compatible client against a real embeddings
server started here (plus a real endpoint when LOCUS_TEST_EMBEDDINGS_URL is set)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from opentelemetry.trace import SpanKind

from locus.retrieval.adapters.background_embedder import BackgroundEmbedder
from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder
from locus.retrieval.adapters.openai_embedder import OpenAICompatibleEmbedder
from locus.retrieval.adapters.torch_embedder import SentenceTransformerEmbedder
from locus.retrieval.domain.errors import EmbedderUnavailable
from locus.retrieval.domain.ports import Embedder
from locus.telemetry import REQUEST_ID_ATTRIBUTE, setup_telemetry, with_request_id

pytestmark = pytest.mark.contract

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
REAL_ENDPOINT = os.environ.get("LOCUS_TEST_EMBEDDINGS_URL", "")
REAL_MODEL = os.environ.get("LOCUS_TEST_EMBEDDINGS_MODEL", MODEL)
REAL_DIMENSION = int(os.environ.get("LOCUS_TEST_EMBEDDINGS_DIMENSION", "384"))

UPLOAD_CODE = (
    "def upload(self, path):\n    '''Send one file to remote storage.'''\n"
    "    return self._send(path)"
)
TEXTS = [
    "x",
    UPLOAD_CODE,
    "class RetryPolicy:\n    max_attempts = 3\n" * 40,  # past 256 word pieces: truncated
    "parse the YAML configuration file and return a dict",
    "def add(a, b):\n    return a + b",
]


@pytest.fixture(
    params=[
        "onnx",
        "torch",
        "onnx-in-a-niced-child-process",
        "openai-compatible-local-server",
        pytest.param(
            "openai-compatible-endpoint",
            marks=pytest.mark.skipif(
                not REAL_ENDPOINT,
                reason="real OpenAI-compatible endpoint: set LOCUS_TEST_EMBEDDINGS_URL to run",
            ),
        ),
    ]
)
async def embedder(request: pytest.FixtureRequest) -> AsyncIterator[Embedder]:
    adapter: Any
    if request.param == "onnx":
        adapter = request.getfixturevalue("onnx_embedder")
    elif request.param == "torch":
        adapter = request.getfixturevalue("torch_embedder")
    elif request.param == "onnx-in-a-niced-child-process":
        model_dir = request.getfixturevalue("onnx_model_dir")
        adapter = BackgroundEmbedder(OnnxEmbedder(model_dir), nice=5)
    elif request.param == "openai-compatible-local-server":
        adapter = OpenAICompatibleEmbedder(
            request.getfixturevalue("embeddings_server"), MODEL, 384, batch_size=2
        )
    else:
        adapter = OpenAICompatibleEmbedder(REAL_ENDPOINT, REAL_MODEL, REAL_DIMENSION)
    if isinstance(adapter, OpenAICompatibleEmbedder | BackgroundEmbedder):
        await adapter.open()
    yield adapter
    if isinstance(adapter, OpenAICompatibleEmbedder | BackgroundEmbedder):
        await adapter.close()


async def test_one_unit_vector_per_text_in_order(embedder: Embedder) -> None:
    vectors = await embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedder.dimension)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    one_by_one = np.vstack([await embedder.embed([text]) for text in TEXTS])
    assert np.allclose(vectors, one_by_one, atol=1e-4)  # batching and padding change nothing


async def test_deterministic_and_empty(embedder: Embedder) -> None:
    first = await embedder.embed([UPLOAD_CODE])
    second = await embedder.embed([UPLOAD_CODE])
    assert np.allclose(first, second, atol=1e-6)
    assert (await embedder.embed([])).shape == (0, embedder.dimension)
    assert embedder.model_id


async def test_meaning_is_closer_than_unrelated_text(embedder: Embedder) -> None:
    query, related, unrelated = await embedder.embed(
        [
            "send a file to remote storage",
            UPLOAD_CODE,
            "def add(a, b):\n    return a + b",
        ]
    )
    assert float(query @ related) > float(query @ unrelated) + 0.1


async def test_local_adapters_agree(
    onnx_embedder: OnnxEmbedder, torch_embedder: SentenceTransformerEmbedder
) -> None:
    """The ONNX export reproduces sentence-transformers, so both share the embedding cache."""
    assert onnx_embedder.model_id == torch_embedder.model_id
    onnx_vectors = await onnx_embedder.embed(TEXTS)
    torch_vectors = await torch_embedder.embed(TEXTS)
    assert float(np.abs(onnx_vectors - torch_vectors).max()) < 1e-4


async def test_a_child_process_embeds_what_this_process_embeds(
    onnx_embedder: OnnxEmbedder, onnx_model_dir: Path
) -> None:
    """Both local models can be sent to the embedding process (they are picklable unopened),
    and its vectors are this process's, so they share the embedding cache."""
    for inner in (OnnxEmbedder(onnx_model_dir), SentenceTransformerEmbedder(device="cpu")):
        child = BackgroundEmbedder(inner, nice=5)
        await child.open()
        try:
            assert child.model_id == onnx_embedder.model_id
            remote = await child.embed(TEXTS)
        finally:
            await child.close()
        assert float(np.abs(remote - await onnx_embedder.embed(TEXTS)).max()) < 1e-4


async def test_onnx_refuses_clearly_without_an_exported_model(tmp_path: Any) -> None:
    with pytest.raises(EmbedderUnavailable, match="export_model --out"):
        await OnnxEmbedder(tmp_path / "missing").open()


async def test_openai_compatible_errors_are_clear(embeddings_server: str) -> None:
    wrong_model = OpenAICompatibleEmbedder(embeddings_server, "no-such-model", 384)
    await wrong_model.open()
    with pytest.raises(EmbedderUnavailable, match="answered 404"):
        await wrong_model.embed(["hello"])
    await wrong_model.close()
    wrong_size = OpenAICompatibleEmbedder(embeddings_server, MODEL, 768)
    await wrong_size.open()
    with pytest.raises(EmbedderUnavailable, match="LOCUS_RETRIEVAL_EMBEDDINGS_DIMENSION"):
        await wrong_size.embed(["hello"])
    await wrong_size.close()
    nobody = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", MODEL, 384, timeout_seconds=2)
    await nobody.open()
    with pytest.raises(EmbedderUnavailable, match="unreachable"):
        await nobody.embed(["hello"])
    await nobody.close()


async def test_a_shorter_truncation_is_its_own_model_id_and_cuts_long_texts(
    onnx_model_dir: Path, onnx_embedder: OnnxEmbedder
) -> None:
    short = OnnxEmbedder(onnx_model_dir, max_tokens=128)
    short.load()
    assert onnx_embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert short.model_id == "sentence-transformers/all-MiniLM-L6-v2@128tokens"
    brief = "def add(a, b):\n    return a + b"
    long_text = brief + "\n" + "\n".join(f"total_{i} = compute_{i}(value_{i})" for i in range(80))
    full = await onnx_embedder.embed([brief, long_text])
    cut = await short.embed([brief, long_text])
    assert float(full[0] @ cut[0]) == pytest.approx(1.0, abs=1e-5)  # short texts: same vector
    assert float(full[1] @ cut[1]) < 0.999  # the tail past 128 word pieces is not embedded
    await short.close()


async def test_a_dead_embedding_process_is_replaced_for_the_next_batch(
    onnx_model_dir: Path,
) -> None:
    """The batch in hand when the child dies fails (the lane retries it); the next one runs
    on a new child, and start-up never loops on a child that cannot start."""
    import multiprocessing
    import os
    import signal
    from concurrent.futures.process import BrokenProcessPool

    child = BackgroundEmbedder(OnnxEmbedder(onnx_model_dir), nice=5)
    await child.open()
    try:
        before = await child.embed(TEXTS[:2])
        for worker in multiprocessing.active_children():
            assert worker.pid is not None
            os.kill(worker.pid, signal.SIGKILL)
            worker.join(timeout=10)
        with pytest.raises(BrokenProcessPool):
            await child.embed(TEXTS[:2])
        after = await child.embed(TEXTS[:2])
        assert float(np.abs(after - before).max()) < 1e-5
    finally:
        await child.close()

    broken = BackgroundEmbedder(OnnxEmbedder(onnx_model_dir / "missing"), nice=5)
    with pytest.raises(EmbedderUnavailable):
        await broken.open()


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux-only")
async def test_the_lane_embeds_in_the_idle_scheduling_class_with_every_thread(
    onnx_model_dir: Path,
) -> None:
    """The vectors lane's process and the runtime threads it started run only on CPU time
    that indexing and searches leave unused (a niced process still took a third of a scan's
    CPU); its vectors are the same as in this process."""
    import multiprocessing

    child = BackgroundEmbedder(OnnxEmbedder(onnx_model_dir), nice=5, idle=True)
    await child.open()
    try:
        vectors = await child.embed(TEXTS[:2])
        (worker,) = multiprocessing.active_children()
        assert worker.pid is not None
        threads = os.listdir(f"/proc/{worker.pid}/task")
        assert threads
        policies = {os.sched_getscheduler(int(thread)) for thread in threads}
        assert policies == {os.SCHED_IDLE}, policies
    finally:
        await child.close()
    direct = OnnxEmbedder(onnx_model_dir)
    await direct.open()
    assert float(np.abs(vectors - await direct.embed(TEXTS[:2])).max()) < 1e-5


async def test_the_embeddings_call_is_a_traced_span_with_the_request_id(
    embeddings_server: str, span_exporter: Any
) -> None:
    telemetry = setup_telemetry("retrieval-under-test", exporters=[span_exporter])
    adapter = OpenAICompatibleEmbedder(
        embeddings_server, MODEL, 384, tracer_provider=telemetry.provider
    )
    await adapter.open()
    try:
        with with_request_id("req-embed-1"):
            await adapter.embed(["hello", "world"])
    finally:
        await adapter.close()
    telemetry.provider.force_flush()

    [call] = [s for s in span_exporter.get_finished_spans() if s.kind == SpanKind.CLIENT]
    assert call.attributes is not None
    assert call.attributes[REQUEST_ID_ATTRIBUTE] == "req-embed-1"
    assert str(call.attributes.get("url.full", call.attributes.get("http.url"))).endswith(
        "/v1/embeddings"
    )
