"""Where extraction runs: a pool of worker processes (every core parses; the service's event
loop and its store writes keep their own core time) or, with no processes configured, a
thread of this process."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from locus.ast.domain import ChunkingPolicy, FileAnalysis, extract

log = logging.getLogger(__name__)


class ParserPool:
    """``extract`` in ``processes`` worker processes (started with ``spawn``: forking a process
    that runs gRPC and NATS threads is unsafe); 0 processes extract in a thread."""

    def __init__(self, processes: int) -> None:
        self._processes = processes
        self._pool: ProcessPoolExecutor | None = None

    async def start(self) -> None:
        if self._processes:
            self._pool = ProcessPoolExecutor(
                max_workers=self._processes, mp_context=multiprocessing.get_context("spawn")
            )
            log.info("parsing in %d worker processes", self._processes)

    async def stop(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    async def extract(
        self, relative_path: str, data: bytes, language: str, policy: ChunkingPolicy
    ) -> FileAnalysis:
        """What ``locus.ast.domain.extract`` returns (and raises) for the file."""
        if self._pool is None:
            return await asyncio.to_thread(extract, relative_path, data, language, policy)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._pool, extract, relative_path, data, language, policy
            )
        except BrokenProcessPool:
            # A worker died (a parser crash on one file, out of memory): a new pool serves
            # the retry; this file fails once like any other extraction error.
            log.warning("a parser process died; starting a new pool")
            await self.stop()
            await self.start()
            raise
