"""A service's start-up heap is frozen out of the garbage collector once it serves."""

from __future__ import annotations

import asyncio
import gc
import os
import signal

import pytest

from locus.rpc.lifecycle import run_until_signalled

pytestmark = pytest.mark.unit


async def test_start_up_objects_are_frozen_once_serving_and_the_signal_stops_it() -> None:
    gc.unfreeze()
    frozen_while_serving: list[int] = []
    stopped = asyncio.Event()
    start_up_heap = [{"n": n} for n in range(10_000)]  # what a start-up builds and keeps

    async def start() -> None:
        asyncio.get_running_loop().call_later(0.2, check_then_signal)

    def check_then_signal() -> None:
        frozen_while_serving.append(gc.get_freeze_count())
        os.kill(os.getpid(), signal.SIGTERM)

    async def stop() -> None:
        stopped.set()

    try:
        await run_until_signalled(start, stop)
    finally:
        gc.unfreeze()
    assert stopped.is_set()
    assert frozen_while_serving[0] >= len(start_up_heap)
