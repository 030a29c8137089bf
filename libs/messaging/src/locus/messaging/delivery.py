"""What a handler may want to know about the message it is processing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass


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
