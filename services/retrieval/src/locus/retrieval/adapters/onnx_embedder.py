"""Embedder on onnxruntime: the exported all-MiniLM-L6-v2 graph (pooling and normalisation
inside), the model's tokenizer.json, numpy. No torch at run time.

Texts are tokenised once, sorted by length and batched, so a batch pads to similar lengths
(code chunks vary a lot: padding everything to 256 word pieces would waste most of the work).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from locus.retrieval.domain.errors import EmbedderUnavailable
from locus.retrieval.export_model import (
    DIMENSION,
    MANIFEST_FILE,
    MAX_LENGTH,
    MODEL_ID,
    ONNX_FILE,
    TOKENIZER_FILE,
    truncated_model_id,
)

log = logging.getLogger(__name__)


def onnx_model_ready(model_dir: Path) -> bool:
    return (model_dir / ONNX_FILE).is_file() and (model_dir / TOKENIZER_FILE).is_file()


def execution_providers(device: str, available: Sequence[str]) -> list[str]:
    """onnxruntime providers for ``device``: "cuda" requires the CUDA provider (an install of
    onnxruntime-gpu), "auto" uses it when present, "cpu" never does."""
    cuda = "CUDAExecutionProvider"
    if device == "cuda" and cuda not in available:
        raise EmbedderUnavailable(
            f"LOCUS_RETRIEVAL_EMBED_DEVICE=cuda, but onnxruntime offers only {list(available)}: "
            "install onnxruntime-gpu on a machine with a GPU, or use auto/cpu"
        )
    if device in ("cuda", "auto") and cuda in available:
        return [cuda, "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


class OnnxEmbedder:
    def __init__(
        self,
        model_dir: Path,
        *,
        batch_size: int = 32,
        threads: int = 0,
        model_id: str = MODEL_ID,
        dimension: int = DIMENSION,
        max_tokens: int = 0,
        device: str = "auto",
    ) -> None:
        self._model_dir = model_dir
        self._device = device  # "auto": CUDA when onnxruntime has it, "cuda", or "cpu"
        self._max_tokens = max_tokens  # 0: the length the model was exported with
        self._batch_size = batch_size
        self._threads = threads or (os.cpu_count() or 1)
        self._model_id = model_id
        self._dimension = dimension
        self._max_length = MAX_LENGTH
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def model_id(self) -> str:
        return truncated_model_id(self._model_id, self._max_tokens)

    @property
    def model_dir(self) -> Path:
        return self._model_dir

    @property
    def dimension(self) -> int:
        return self._dimension

    async def open(self) -> None:
        await asyncio.to_thread(self.load)

    def load(self) -> None:
        if self._session is not None:
            return
        if not onnx_model_ready(self._model_dir):
            raise EmbedderUnavailable(
                f"no exported ONNX model in {self._model_dir}: run `python -m "
                f"locus.retrieval.export_model --out {self._model_dir}` (needs the `model` "
                "extra: torch==2.13.0), or set LOCUS_RETRIEVAL_EMBEDDER=torch"
            )
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        manifest_path = self._model_dir / MANIFEST_FILE
        if manifest_path.exists():
            manifest = json.loads(manifest_path.read_text())
            if manifest.get("model_id") != self._model_id or manifest.get("dimension") != (
                self._dimension
            ):
                raise EmbedderUnavailable(
                    f"{self._model_dir} holds {manifest.get('model_id')} "
                    f"({manifest.get('dimension')} dimensions), expected {self._model_id} "
                    f"({self._dimension}): export the model again"
                )
            self._max_length = int(manifest.get("max_length", MAX_LENGTH))
        if self._max_tokens:
            self._max_length = min(self._max_tokens, self._max_length)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # Idle pool threads sleep instead of spinning: spinning halves throughput as soon as
        # anything else (tantivy, the event loop, another service) wants the same cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        providers = execution_providers(self._device, onnxruntime.get_available_providers())
        self._session = onnxruntime.InferenceSession(
            str(self._model_dir / ONNX_FILE), options, providers=providers
        )
        tokenizer = Tokenizer.from_file(str(self._model_dir / TOKENIZER_FILE))
        # tokenizer.json ships with fixed padding to 128; pad per batch ourselves instead.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self._max_length)
        self._tokenizer = tokenizer
        log.info(
            "ONNX embedder loaded from %s on %s (%d threads)",
            self._model_dir,
            self._session.get_providers()[0],
            self._threads,
        )

    async def close(self) -> None:
        self._session = None
        self._tokenizer = None

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return await asyncio.to_thread(self.encode, list(texts))

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Blocking: embed ``texts`` on the calling thread."""
        if self._session is None:
            raise RuntimeError("OnnxEmbedder is not open")
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        result = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            width = max(len(encodings[i].ids) for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)  # pad id 0
            attention = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                ids = encodings[index].ids
                input_ids[row, : len(ids)] = ids
                attention[row, : len(ids)] = 1
            (vectors,) = self._session.run(
                None,
                {
                    "input_ids": input_ids,
                    "attention_mask": attention,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
            result[batch] = vectors
        return result
