"""Extraction in worker processes: a worker that dies (killed, out of memory, a parser crash)
costs no file — the pool is replaced and the file tried again on the new one."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from locus.ast.adapters.parser_pool import ParserPool
from locus.ast.domain import DEFAULT_CHUNKING_POLICY

pytestmark = pytest.mark.integration

SOURCE = b"def upload(path):\n    return retry(path)\n\n\ndef retry(path):\n    return path\n"


async def test_a_killed_worker_is_replaced_and_the_file_parsed_on_the_new_pool() -> None:
    pool = ParserPool(1)
    await pool.start()
    try:
        first = await pool.extract("pkg/up.py", SOURCE, "python", DEFAULT_CHUNKING_POLICY)
        assert [s.name for s in first.symbols if s.kind == "function"] == [
            "upload",
            "retry",
        ]
        workers = multiprocessing.active_children()
        assert workers
        for worker in workers:
            assert worker.pid is not None
            os.kill(worker.pid, signal.SIGKILL)
            worker.join(timeout=10)
        again = await pool.extract("pkg/up.py", SOURCE, "python", DEFAULT_CHUNKING_POLICY)
        assert again == first
    finally:
        await pool.stop()
