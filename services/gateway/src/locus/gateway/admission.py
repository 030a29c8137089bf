"""Admission control for questions: at most ``limit`` run at once, at most ``queue`` more wait
(each for at most ``max_wait_seconds``), and everything beyond is shed at once. An overloaded
gateway answers quickly with RESOURCE_EXHAUSTED (queue full) or UNAVAILABLE (waited too long),
both of which a client may retry, instead of letting every call run into its deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass


class Overloaded(Exception):
    """The question was shed: the queue is full."""


class WaitedTooLong(Exception):
    """The question waited its longest for a slot."""


@dataclass
class AdmissionStats:
    admitted: int = 0
    shed: int = 0
    timed_out: int = 0


class AdmissionGate:
    def __init__(self, name: str, *, limit: int, queue: int, max_wait_seconds: float) -> None:
        self._name = name
        self._limit = limit
        self._queue = queue
        self._max_wait = max_wait_seconds
        self._slots = asyncio.Semaphore(limit)
        self._waiting = 0
        self.stats = AdmissionStats()

    @asynccontextmanager
    async def admitted(self) -> AsyncIterator[float]:
        """Hold one slot for the body; yields the seconds waited for it."""
        if self._slots.locked() and self._waiting >= self._queue:
            self.stats.shed += 1
            raise Overloaded(
                f"the gateway is answering {self._limit} {self._name} requests and "
                f"{self._waiting} more are waiting; retry in a moment"
            )
        started = time.monotonic()
        self._waiting += 1
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=self._max_wait)
        except TimeoutError:
            self.stats.timed_out += 1
            raise WaitedTooLong(
                f"no {self._name} slot was free within {self._max_wait:.1f} s "
                f"({self._limit} running); retry in a moment"
            ) from None
        finally:
            self._waiting -= 1
        self.stats.admitted += 1
        try:
            yield time.monotonic() - started
        finally:
            self._slots.release()
