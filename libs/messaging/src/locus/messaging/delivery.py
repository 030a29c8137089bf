"""What a handler may want to know about the message it is processing, and the keep-alive that
holds its ack deadline while it works."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from nats.aio.msg import Msg


@dataclass(frozen=True)
class Delivery:
    """What a handler may want to know about the message it is processing."""

    subject: str
    attempt: int
    max_deliver: int
    message_id: str
    request_id: str | None
    progress: Callable[[], Awaitable[None]]  # extends the ack deadline for long work

    @property
    def is_last_attempt(self) -> bool:
        return self.attempt >= self.max_deliver


async def keep_in_progress(messages: Sequence[Msg], ack_wait_seconds: float) -> None:
    """While a handler works on ``messages``, tell JetStream every third of ``ack_wait`` that it
    is still at it: a message is then redelivered only when its consumer is gone (a crashed
    process), and that happens one ``ack_wait`` after the crash, so ``ack_wait`` stays short."""
    interval = max(1.0, min(20.0, ack_wait_seconds / 3))
    while True:
        await asyncio.sleep(interval)
        for message in messages:
            with contextlib.suppress(Exception):
                await message.in_progress()
