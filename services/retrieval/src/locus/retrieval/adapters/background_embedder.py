"""An Embedder that runs another one in a child process at a lower CPU priority.

Embedding on the CPU is by far the heaviest work of a scan. In its own niced process it uses
only the cores that parsing, BM25 indexing and queries leave idle, and it never holds this
process's GIL: the vectors lane fills idle time instead of competing with the searchable path
and with searches (``LOCUS_RETRIEVAL_EMBED_WORKER=process``, ``..._EMBED_WORKER_NICE``).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
from numpy.typing import NDArray

from locus.retrieval.domain.errors import EmbedderUnavailable
from locus.retrieval.domain.ports import Embedder
from locus.rpc import die_with_parent

log = logging.getLogger(__name__)

_worker_embedder: Embedder | None = None  # the child process's own embedder
# One event loop for the child's life: a loop (and its thread pool) per call cost each of the
# lane's calls a new thread.
_worker_loop: asyncio.AbstractEventLoop | None = None


def _start_worker(inner: Embedder, nice: int, idle: bool, parent_pid: int) -> None:
    global _worker_embedder, _worker_loop
    die_with_parent(parent_pid)
    if nice:
        os.nice(nice)
    _worker_loop = asyncio.new_event_loop()
    _worker_loop.run_until_complete(inner.open())
    if idle:
        _schedule_idle()
    _worker_embedder = inner


def _schedule_idle() -> None:
    """Linux: put every thread of this process (the model runtime's pool included; threads
    started later inherit it) in the idle scheduling class, which runs only on CPU time no
    other process wants: a niced embedder still took a third of the CPU during a scan."""
    if not hasattr(os, "SCHED_IDLE"):
        return
    try:
        for thread in os.listdir("/proc/self/task"):
            os.sched_setscheduler(int(thread), os.SCHED_IDLE, os.sched_param(0))
    except OSError as error:
        log.warning("embedding process: idle scheduling refused (%s); nice only", error)


def _embed_in_worker(texts: list[str]) -> NDArray[np.float32]:
    if _worker_embedder is None or _worker_loop is None:
        raise RuntimeError("the embedding worker was not started")
    return _worker_loop.run_until_complete(_worker_embedder.embed(texts))


class BackgroundEmbedder:
    """Delegates to ``inner`` (not yet opened; it is pickled to the child) in one child
    process started with ``spawn`` (forking a process with gRPC and NATS threads is unsafe)."""

    def __init__(self, inner: Embedder, *, nice: int = 10, idle: bool = False) -> None:
        self._inner = inner
        self._nice = nice
        self._idle = idle
        self._pool: ProcessPoolExecutor | None = None

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def open(self) -> None:
        self._pool = self._new_pool()
        # Load the model now, so a broken model fails the start-up rather than the first batch.
        try:
            await self._run(["warm-up"])
        except BrokenProcessPool as error:
            await self.close()
            raise EmbedderUnavailable(f"the embedding process did not start: {error}") from error
        log.info(
            "embedding in a child process (nice %d%s)",
            self._nice,
            ", idle scheduling" if self._idle else "",
        )

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self._inner, self._nice, self._idle, os.getpid()),
        )

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    async def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        try:
            return await self._run(list(texts))
        except BrokenProcessPool:
            # The child died (killed, out of memory): the next call gets a new one; this one
            # fails, and the lane retries its batch (with back-off, then a dead letter).
            log.warning("the embedding process died; a new one serves the next batch")
            broken, self._pool = self._pool, self._new_pool()
            if broken is not None:
                broken.shutdown(wait=False, cancel_futures=True)
            raise

    async def _run(self, texts: list[str]) -> NDArray[np.float32]:
        if self._pool is None:
            raise RuntimeError("BackgroundEmbedder is not open")
        loop = asyncio.get_running_loop()
        vectors: NDArray[np.float32] = await loop.run_in_executor(
            self._pool, _embed_in_worker, texts
        )
        return vectors
