"""Gathers the messages a consumer handles at about the same time (the messages of one fetch,
handled concurrently) into one batch for one handler call: one transaction, one index write,
one report for many messages. A failed batch is retried message by message, so one bad message
fails alone instead of failing the batch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

ItemT = TypeVar("ItemT")


class MessageBatcher(Generic[ItemT]):
    """``await submit(item)`` returns once ``handler`` processed a batch holding ``item`` (and
    raises what processing it raised). Batches run one at a time: the stores have one writer."""

    def __init__(
        self,
        handler: Callable[[Sequence[ItemT]], Awaitable[None]],
        *,
        max_items: int = 32,
        linger_seconds: float = 0.05,
    ) -> None:
        self._handler = handler
        self._max_items = max_items
        self._linger = linger_seconds
        self._pending: list[_Pending[ItemT]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._running: set[asyncio.Task[None]] = set()  # the loop keeps only weak references

    async def submit(self, item: ItemT) -> None:
        loop = asyncio.get_running_loop()
        pending = _Pending(item, loop.create_future())
        self._pending.append(pending)
        if len(self._pending) >= self._max_items:
            self._flush_now()
        elif self._timer is None:
            self._timer = loop.call_later(self._linger, self._flush_now)
        await pending.done

    def _flush_now(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        if batch:
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run(self, batch: list[_Pending[ItemT]]) -> None:
        async with self._lock:
            try:
                await self._handler([p.item for p in batch])
            except Exception as error:
                if len(batch) == 1:
                    _settle(batch[0], error)
                    return
                log.warning("batch of %d failed (%s); retrying one by one", len(batch), error)
                for pending in batch:
                    try:
                        await self._handler([pending.item])
                    except Exception as single_error:
                        _settle(pending, single_error)
                    else:
                        _settle(pending, None)
                return
            for pending in batch:
                _settle(pending, None)


@dataclass
class _Pending(Generic[ItemT]):
    item: ItemT
    done: asyncio.Future[None]


def _settle(pending: _Pending[ItemT], error: BaseException | None) -> None:
    if pending.done.done():
        return
    if error is None:
        pending.done.set_result(None)
    else:
        pending.done.set_exception(error)
