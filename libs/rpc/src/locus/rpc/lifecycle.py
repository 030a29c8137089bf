"""The life of a service process: start its parts, serve until SIGINT/SIGTERM, then stop
gracefully — health NOT_SERVING, stop accepting RPCs and drain them, stop consumers and the
broker (in-flight messages finish), close stores, flush telemetry."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from locus.rpc.server import RpcServer
from locus.telemetry import Telemetry

log = logging.getLogger(__name__)


class Component(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class ServiceRuntime:
    """Components start in order (stores before the bus) and stop in reverse order."""

    def __init__(
        self, name: str, server: RpcServer, telemetry: Telemetry, components: Sequence[Component]
    ) -> None:
        self.name = name
        self.server = server
        self.telemetry = telemetry
        self._components = list(components)
        self._started: list[Component] = []

    @property
    def address(self) -> str:
        return self.server.address

    async def start(self) -> None:
        await self.server.start()  # answers health checks with NOT_SERVING meanwhile
        for component in self._components:
            await component.start()
            self._started.append(component)
        await self.server.mark_serving()
        log.info("%s ready on %s", self.name, self.server.address)

    async def stop(self) -> None:
        await self.server.stop()
        while self._started:
            component = self._started.pop()
            try:
                await component.stop()
            except Exception:
                log.exception("error while stopping %s", type(component).__name__)
        self.telemetry.shutdown()

    async def run(self) -> None:
        await run_until_signalled(self.start, self.stop)


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
