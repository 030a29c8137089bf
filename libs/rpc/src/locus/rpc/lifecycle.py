"""The life of a service process: start its parts, serve until SIGINT/SIGTERM, then stop
gracefully — health NOT_SERVING, stop accepting RPCs and drain them, stop consumers and the
broker (in-flight messages finish), close stores, flush telemetry. The metrics endpoint, when
the settings ask for one, serves from before the start to after the stop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from locus.config import ServiceSettings, StartupRefused, load_settings
from locus.rpc.server import RpcServer
from locus.telemetry import Telemetry
from locus.telemetry.metrics import MetricsEndpoint

log = logging.getLogger(__name__)


class Component(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class Store(Protocol):
    async def initialize(self) -> None: ...

    async def close(self) -> None: ...


class StoreLifecycle:
    """A store as a component: ``initialize()`` on start, ``close()`` on stop."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def start(self) -> None:
        await self._store.initialize()

    async def stop(self) -> None:
        await self._store.close()


class ServiceRuntime:
    """Components start in order (stores before the bus) and stop in reverse order."""

    def __init__(
        self,
        name: str,
        server: RpcServer,
        telemetry: Telemetry,
        components: Sequence[Component],
        *,
        stop_timeout_seconds: float = 20.0,
        metrics: MetricsEndpoint | None = None,
    ) -> None:
        self.name = name
        self.server = server
        self.telemetry = telemetry
        self._components = list(components)
        self._started: list[Component] = []
        self._stop_timeout = stop_timeout_seconds
        self.metrics = metrics

    @property
    def address(self) -> str:
        return self.server.address

    async def start(self) -> None:
        if self.metrics is not None:
            await self.metrics.start()
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
                # Bounded: a component whose peer is gone (e.g. the bus without its NATS
                # server) must not keep the process from exiting.
                await asyncio.wait_for(component.stop(), self._stop_timeout)
            except TimeoutError:
                log.error(
                    "%s did not stop within %.0fs", type(component).__name__, self._stop_timeout
                )
            except Exception:
                log.exception("error while stopping %s", type(component).__name__)
        self.telemetry.shutdown()
        if self.metrics is not None:
            await self.metrics.stop()

    async def run(self) -> None:
        """Serve until signalled; a start-up the service refuses (StartupRefused: a schema
        behind the code with migrate-on-start off, ...) exits with status 2 and its message."""
        try:
            await run_until_signalled(self.start, self.stop)
        except StartupRefused as refused:
            log.error("%s cannot start: %s", self.name, refused)
            raise SystemExit(2) from None


async def run_until_signalled(
    start: Callable[[], Awaitable[None]], stop: Callable[[], Awaitable[None]]
) -> None:
    """Start, serve until SIGINT/SIGTERM, stop. A signal during start-up (a dependency that is
    not reachable keeps it waiting) cancels the start and stops what had started."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    starting = asyncio.ensure_future(start())
    signalled = asyncio.create_task(stopping.wait())
    try:
        await asyncio.wait({starting, signalled}, return_when=asyncio.FIRST_COMPLETED)
        if starting.done():
            starting.result()  # a failed start-up raises here
            # What start-up built (modules, clients, models, caches) lives as long as the
            # process: frozen out of the collector's way, a full collection scans only what
            # requests made since. Without it, full collections over a service's start-up
            # heap paused requests (the ranking's 30 ms stage took 130-160 ms now and then).
            gc.collect()
            gc.freeze()
            await signalled
        else:
            log.warning("stopping before start-up finished")
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
        log.info("stopping")
    finally:
        signalled.cancel()
        await stop()


SettingsT = TypeVar("SettingsT", bound=ServiceSettings)


def run_service(
    build: Callable[[SettingsT], ServiceRuntime], settings_type: type[SettingsT]
) -> None:
    """What ``python -m locus.<name>`` does: read the settings, build the runtime inside the
    event loop (gRPC aio objects bind to the running loop) and serve until signalled. A
    start-up the service refuses — invalid settings, a schema behind the code — exits with
    status 2 and its message, without a traceback."""

    async def serve() -> None:
        await build(load_settings(settings_type)).run()

    try:
        asyncio.run(serve())
    except StartupRefused as refused:  # settings: read before logging is configured
        print(f"cannot start: {refused}", file=sys.stderr)
        raise SystemExit(2) from None
