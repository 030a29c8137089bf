"""Foreground work of the retrieval process (files being made searchable, searches), which
the vectors lane gives way to: it embeds only once this process has had none for a quiet
period, and waits at most a bound each time so vectors keep moving under load that never
stops. Even an idle-class embedder takes the other hyperthread of the core and memory
bandwidth from parsing, BM25 and queries."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator


class ForegroundActivity:
    """Whether this process has foreground work (files being made searchable, searches) now
    or had some within the last ``quiet_seconds``. ``quiet()`` waits until it has not, at most
    ``max_wait_seconds`` (0 quiet seconds: never waits)."""

    def __init__(
        self,
        quiet_seconds: float = 1.0,
        max_wait_seconds: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._quiet = quiet_seconds
        self._max_wait = max_wait_seconds
        self._clock = clock
        self._in_flight = 0
        self._last_active = float("-inf")
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """Around one piece of foreground work (a files.parsed message, a Search)."""
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            self._last_active = self._clock()
            if not self._in_flight:
                self._idle.set()

    def busy(self) -> bool:
        if self._quiet <= 0:
            return False
        return self._in_flight > 0 or self._clock() - self._last_active < self._quiet

    async def quiet(self) -> float:
        """Wait until foreground work has gone quiet (or the bound passed); the seconds waited."""
        started = self._clock()
        deadline = started + self._max_wait
        while self.busy() and (now := self._clock()) < deadline:
            if self._in_flight:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._idle.wait(), deadline - now)
            else:
                await asyncio.sleep(min(self._last_active + self._quiet, deadline) - now)
        return self._clock() - started
