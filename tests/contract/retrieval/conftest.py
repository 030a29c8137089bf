"""Fixtures for the retrieval port contracts: the real MiniLM model (loaded once per session),
a real OpenAI-compatible embeddings server serving it, and a chunk factory."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from required import unavailable

from locus.retrieval.adapters.onnx_embedder import OnnxEmbedder, onnx_model_ready
from locus.retrieval.adapters.torch_embedder import SentenceTransformerEmbedder
from locus.retrieval.domain.model import IndexedChunk

REPO_ROOT = Path(__file__).resolve().parents[3]
MakeChunk = Callable[..., IndexedChunk]


def model_dir() -> Path:
    configured = os.environ.get("LOCUS_RETRIEVAL_MODEL_DIR")
    return Path(configured) if configured else REPO_ROOT / ".locus/models/all-minilm-l6-v2"


@pytest.fixture(scope="session")
def onnx_model_dir() -> Path:
    """The exported ONNX model, exported on first use when torch is installed."""
    directory = model_dir()
    if not onnx_model_ready(directory):
        try:
            from locus.retrieval.export_model import export
        except ImportError:  # pragma: no cover - export_model imports lazily
            unavailable("the embedding model", "no exported ONNX model and no torch to export it")
        try:
            export(directory)
        except (ImportError, SystemExit) as error:
            unavailable(
                "the embedding model",
                f"no exported ONNX model in {directory} and the `model` extra is missing "
                f"({error}); run `python -m locus.retrieval.export_model --out {directory}`",
            )
    return directory


@pytest.fixture(scope="session")
def onnx_embedder(onnx_model_dir: Path) -> OnnxEmbedder:
    embedder = OnnxEmbedder(onnx_model_dir)
    embedder.load()
    return embedder


@pytest.fixture(scope="session")
def torch_embedder() -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder()
    try:
        embedder.load()
    except Exception as error:
        unavailable("the torch embedder", str(error))
    return embedder


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """POST /v1/embeddings in the OpenAI wire format, answered by the real MiniLM model."""

    embedder: OnnxEmbedder
    model_name = "sentence-transformers/all-MiniLM-L6-v2"

    def do_POST(self) -> None:
        if self.path != "/v1/embeddings":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = request["input"]
        if isinstance(texts, str):
            texts = [texts]
        if request.get("model") != self.model_name:
            self._send(404, {"error": {"message": f"model {request.get('model')} not served"}})
            return
        vectors = self.embedder.encode(list(texts))
        self._send(
            200,
            {
                "object": "list",
                "model": self.model_name,
                "data": [
                    {"object": "embedding", "index": i, "embedding": vector.tolist()}
                    for i, vector in enumerate(vectors)
                ],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="session")
def embeddings_server(onnx_embedder: OnnxEmbedder) -> Iterator[str]:
    """A real OpenAI-compatible embeddings server on loopback; yields its /v1 base URL."""
    handler = type("Handler", (_EmbeddingsHandler,), {"embedder": onnx_embedder})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def make_chunk() -> MakeChunk:
    def make(
        chunk_id: str,
        text: str,
        *,
        project_id: str = "p1",
        file_id: str = "",
        path: str = "src/app.py",
        language: str = "python",
        subsystem: str = "core",
        symbol: str = "",
        snapshot_seq: int = 1,
        content_sha256: str = "",
        ordinal: int = 0,
    ) -> IndexedChunk:
        return IndexedChunk(
            chunk_id=chunk_id,
            project_id=project_id,
            snapshot_id=f"snap-{snapshot_seq}",
            snapshot_seq=snapshot_seq,
            file_id=file_id or f"f-{path}",
            path=path,
            language=language,
            subsystem=subsystem,
            start_line=1,
            end_line=max(1, text.count("\n") + 1),
            node_id=f"n-{chunk_id}",
            kind="function",
            symbol_node_id=f"n-{chunk_id}",
            symbol_qualified_name=symbol,
            text=text,
            content_sha256=content_sha256 or hashlib.sha256(text.encode()).hexdigest(),
            ordinal=ordinal,
        )

    return make
