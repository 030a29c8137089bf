"""Retrieval settings (LOCUS_RETRIEVAL_*). Fails fast on invalid values.

Backends are chosen by configuration only: an OpenSearch URL switches BM25 to OpenSearch, a
Qdrant URL switches vectors to a Qdrant server, an embeddings URL switches the embedder to an
OpenAI-compatible endpoint; without them everything runs embedded under ``data_dir``. Their
credentials (the API keys, the OpenSearch URL with its ``user:password@``) are SecretStr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from locus.codepaths import VALUE_CLASSES
from locus.config import ServiceSettings


class RetrievalSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="LOCUS_RETRIEVAL_", extra="ignore")

    service_name: str = "retrieval"
    grpc_port: int = Field(default=50053, ge=0, le=65535)

    # Embeddings. "onnx" needs the exported model (python -m locus.retrieval.export_model);
    # "torch" needs the `model` extra. A set embeddings_url wins over both.
    embedder: Literal["onnx", "torch"] = "onnx"
    model_dir: Path = Path(".locus/models/all-minilm-l6-v2")
    embed_batch_size: int = Field(default=32, ge=1, le=1024)
    embed_threads: int = Field(default=0, ge=0, le=256)  # 0 = every core
    # Word pieces a chunk is truncated to before embedding (0: the exported model's 256).
    # 128 is the length MiniLM was fine-tuned at and embeds about twice as fast.
    embed_max_tokens: int = Field(default=0, ge=0, le=256)
    # A local model embeds in a child process at a lower CPU priority ("process"), so the
    # vectors lane only uses cores that parsing, indexing and searches leave idle; "thread"
    # embeds in this process.
    embed_worker: Literal["process", "thread"] = "process"
    # Where a local model runs: "auto" takes a GPU when one is usable (onnxruntime's CUDA
    # provider, or torch.cuda), "cuda" requires one, "cpu" never uses one.
    embed_device: Literal["auto", "cpu", "cuda"] = "auto"
    embed_worker_nice: int = Field(default=10, ge=0, le=19)
    # Linux: the embedding process in the idle scheduling class (SCHED_IDLE), so it runs only
    # on CPU time that indexing and searches leave unused; false: nice only.
    embed_worker_idle: bool = True
    embeddings_url: str = ""  # e.g. http://vllm:8000/v1 (POST {url}/embeddings)
    embeddings_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    embeddings_api_key: SecretStr = SecretStr("")
    embeddings_dimension: int = Field(default=384, ge=1, le=16384)

    # Backends: "auto" picks the server adapter when its URL is set, else the embedded one
    # (tantivy / qdrant-edge under data_dir); naming the server adapter requires its URL.
    bm25_backend: Literal["auto", "tantivy", "opensearch"] = "auto"
    vector_backend: Literal["auto", "edge", "qdrant"] = "auto"
    # A secured cluster's URL carries its credentials (https://user:password@host:9200).
    opensearch_url: SecretStr = SecretStr("")
    opensearch_index: str = "locus-chunks"
    qdrant_url: str = ""
    qdrant_api_key: SecretStr = SecretStr("")
    qdrant_collection: str = "locus-chunks"

    # Indexing (searchable): how many files.parsed messages one fetch takes; they are written
    # to the BM25 index together.
    fetch_batch: int = Field(default=64, ge=1, le=1000)
    batch_linger_seconds: float = Field(default=0.05, ge=0, le=10)
    # While files keep coming (a scan) a batch lingers this long instead: fewer, larger
    # batches, each one BM25 commit.
    stream_batch_linger_seconds: float = Field(default=0.3, ge=0, le=10)
    # The vectors lane: file parts per batch (their distinct new chunks are embedded
    # together), chunks embedded between two writes of the embedding cache, and the value
    # classes of files whose chunks get vectors at all (source, test, docs, vendored).
    # Off: this replica indexes and serves searches but embeds nothing (its vectors wait in
    # JetStream for a replica with the lane on, e.g. one next to a GPU).
    vectors_lane_enabled: bool = True
    vectors_fetch_batch: int = Field(default=64, ge=1, le=1000)
    vectors_cache_every: int = Field(default=256, ge=1, le=100_000)
    # Foreground work comes first: the lane embeds only after this process has had no
    # files.parsed in hand and no Search running for this long (0: never waits), and waits at
    # most vectors_yield_max_seconds before each call of vectors_embed_slice texts, so
    # vectors still move under changes or queries that never stop.
    # Texts per embedder call of the lane (its texts sorted by length, so a small call pads
    # as little as a large one); foreground work waits at most one call.
    vectors_embed_slice: int = Field(default=128, ge=1, le=4096)
    vectors_yield_quiet_seconds: float = Field(default=1.0, ge=0, le=60)
    vectors_yield_max_seconds: float = Field(default=60.0, ge=0, le=3600)
    vector_classes: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(VALUE_CLASSES)
    )
    # Payload/HNSW optimisation of the embedded vector index after this many written points.
    optimize_every_points: int = Field(default=20_000, ge=1)

    # Search defaults and bounds.
    default_top_k: int = Field(default=10, ge=1, le=1000)
    max_top_k: int = Field(default=500, ge=1, le=1000)
    default_candidates: int = Field(default=50, ge=1, le=5000)
    max_candidates: int = Field(default=500, ge=1, le=5000)
    default_rrf_k: int = Field(default=60, ge=1, le=100_000)
    max_query_chars: int = Field(default=16000, ge=1)
    # Search's file list (SearchRequest.top_files): files ranked by their chunks' BM25 among
    # this many lexical chunks, at most max_top_files of them.
    file_pool: int = Field(default=2000, ge=1, le=20_000)
    max_top_files: int = Field(default=1000, ge=1, le=20_000)

    @field_validator("embeddings_url", "qdrant_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https:// (got {value!r})")
        return value

    @field_validator("opensearch_url")
    @classmethod
    def _secret_http_url(cls, value: SecretStr) -> SecretStr:
        url = value.get_secret_value().strip().rstrip("/")
        if url and not url.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")  # the URL is not echoed
        return SecretStr(url)

    @field_validator("vector_classes", mode="before")
    @classmethod
    def _split_classes(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        unknown = sorted(set(value) - set(VALUE_CLASSES)) if isinstance(value, list) else []
        if unknown:
            raise ValueError(f"unknown value classes {unknown}; known: {', '.join(VALUE_CLASSES)}")
        return value

    @model_validator(mode="after")
    def _backend_urls(self) -> RetrievalSettings:
        if self.bm25_backend == "opensearch" and not self.opensearch_url.get_secret_value():
            raise ValueError("bm25_backend=opensearch needs LOCUS_RETRIEVAL_OPENSEARCH_URL")
        if self.vector_backend == "qdrant" and not self.qdrant_url:
            raise ValueError("vector_backend=qdrant needs LOCUS_RETRIEVAL_QDRANT_URL")
        return self

    @property
    def uses_opensearch(self) -> bool:
        return self.bm25_backend == "opensearch" or (
            self.bm25_backend == "auto" and bool(self.opensearch_url.get_secret_value())
        )

    @property
    def uses_qdrant_server(self) -> bool:
        return self.vector_backend == "qdrant" or (
            self.vector_backend == "auto" and bool(self.qdrant_url)
        )

    @property
    def bm25_dir(self) -> Path:
        return self.data_dir / "bm25"

    @property
    def vectors_dir(self) -> Path:
        return self.data_dir / "vectors"
