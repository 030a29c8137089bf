"""Where extraction runs: a pool of worker processes (every core parses; the service's event
loop and its store writes keep their own core time) or, with no processes configured, a
thread of this process."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from locus.ast.domain import ChunkingPolicy, FileAnalysis, extract
from locus.ast.domain.language_spec import NO_ROOT, SourceRoot
from locus.rpc import die_with_parent

log = logging.getLogger(__name__)


class ParserPool:
    """``extract`` in ``processes`` worker processes (started with ``spawn``: forking a process
    that runs gRPC and NATS threads is unsafe); 0 processes extract in a thread."""

    def __init__(self, processes: int) -> None:
        self._processes = processes
        self._pool: ProcessPoolExecutor | None = None
        self._generation = 0  # which pool a failed call ran on
        self._restarting = asyncio.Lock()

    async def start(self) -> None:
        if self._processes:
            self._pool = self._new_pool()
            log.info("parsing in %d worker processes", self._processes)

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self._processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=die_with_parent,
            initargs=(os.getpid(),),
        )

    async def stop(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    async def extract(
        self,
        relative_path: str,
        data: bytes,
        language: str,
        policy: ChunkingPolicy,
        root: SourceRoot = NO_ROOT,
    ) -> FileAnalysis:
        """What ``locus.ast.domain.extract`` returns (and raises) for the file."""
        if not self._processes:
            return await asyncio.to_thread(extract, relative_path, data, language, policy, root)
        for attempt in (1, 2):
            pool, generation = self._pool, self._generation
            if pool is None:
                raise RuntimeError("ParserPool is not started")
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(
                    pool, extract, relative_path, data, language, policy, root
                )
            except BrokenProcessPool:
                # A worker died (a parser crash, out of memory): every file in flight on that
                # pool sees this. One new pool replaces it, and each file is tried once more,
                # so only a file that breaks the new pool too fails.
                await self._replace(generation)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _replace(self, broken_generation: int) -> None:
        async with self._restarting:
            if self._generation != broken_generation:
                return  # another caller replaced it already
            log.warning("a parser process died; starting a new pool")
            broken, self._pool = self._pool, self._new_pool()
            self._generation += 1
            if broken is not None:
                broken.shutdown(wait=False, cancel_futures=True)
