"""Extraction in worker processes: a worker that dies (killed, out of memory, a parser crash)
costs no file — the pool is replaced and the file tried again on the new one."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

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


def test_workers_die_with_a_service_that_is_killed(tmp_path: Path) -> None:
    """A service killed without a clean stop leaves no parser process behind."""
    script = tmp_path / "service.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio, multiprocessing, sys
            from locus.ast.adapters.parser_pool import ParserPool
            from locus.ast.domain import DEFAULT_CHUNKING_POLICY

            async def main():
                pool = ParserPool(2)
                await pool.start()
                await pool.extract("a.py", b"def f():\\n    pass\\n", "python",
                                   DEFAULT_CHUNKING_POLICY)
                print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
                await asyncio.sleep(600)

            if __name__ == "__main__":  # spawned workers import this file again
                asyncio.run(main())
            """
        )
    )
    service = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert service.stdout is not None
        workers = [int(pid) for pid in service.stdout.readline().split()]
        assert workers
        assert all(alive(pid) for pid in workers)
    finally:
        service.kill()
        service.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in workers)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
