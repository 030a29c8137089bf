"""Run a service until SIGINT/SIGTERM, then stop it gracefully."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


async def run_until_signalled(
    start: Callable[[], Awaitable[None]], stop: Callable[[], Awaitable[None]]
) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    await start()
    try:
        await stopping.wait()
        log.info("stopping")
    finally:
        await stop()
