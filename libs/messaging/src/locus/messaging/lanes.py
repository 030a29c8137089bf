"""Priority lanes: one durable pull consumer per subject, drained most valuable first, in
large batches. Used for background work whose order matters more than its latency (vectors).

Every lane keeps the bus's delivery rules: an undecodable message, or one the handler rejects
as malformed, goes to the dead-letter subject at once; a batch that fails is retried message by
message, so one bad message fails alone; a message that keeps failing is dead-lettered after
``max_deliver`` deliveries. Trace context and the request ID of each message are continued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

import nats.errors
from google.protobuf.message import DecodeError, Message
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from opentelemetry import baggage, context, propagate, trace

from locus.messaging.delivery import Delivery, keep_in_progress
from locus.telemetry import REQUEST_ID_ATTRIBUTE, REQUEST_ID_BAGGAGE_KEY
from locus.telemetry.metrics import EVENT_SECONDS, EVENTS

if TYPE_CHECKING:
    from locus.messaging.bus import EventBus

log = logging.getLogger(__name__)

EventT = TypeVar("EventT", bound=Message)


class LaneItem(Generic[EventT]):
    """One decoded message of a lane batch. A handler calls ``reject`` for a message that
    can never be processed; it is then dead-lettered instead of acknowledged."""

    __slots__ = ("delivery", "event", "rejected", "subject")

    def __init__(self, event: EventT, delivery: Delivery, subject: str) -> None:
        self.event = event
        self.delivery = delivery
        self.subject = subject
        self.rejected = ""

    def reject(self, reason: str) -> None:
        self.rejected = reason or "rejected"


LaneHandler = Callable[[list[LaneItem[EventT]]], Awaitable[None]]


class PriorityLanes(Generic[EventT]):
    """Consumes ``subjects`` (most valuable first) with durable pull consumers
    ``<durable>-<last subject token>``; each round takes up to ``batch_size`` messages from the
    first subject that has any."""

    def __init__(
        self,
        bus: EventBus,
        subjects: Sequence[str],
        event_type: type[EventT],
        durable: str,
        handler: LaneHandler[EventT],
        *,
        batch_size: int,
        idle_wait_seconds: float = 1.0,
    ) -> None:
        self._bus = bus
        self._subjects = list(subjects)
        self._event_type = event_type
        self._durable = durable
        self._handler = handler
        self._batch_size = batch_size
        self._idle_wait = idle_wait_seconds
        self._tracer = bus.tracer
        self._task: asyncio.Task[None] | None = None
        self._subscriptions: list[object] = []
        self._paused = asyncio.Event()
        self._paused.set()

    async def start(self) -> None:
        jetstream = self._bus.jetstream()
        for subject in self._subjects:
            name = f"{self._durable}-{subject.rsplit('.', 1)[-1]}"
            config = ConsumerConfig(
                durable_name=name,
                ack_policy=AckPolicy.EXPLICIT,
                deliver_policy=DeliverPolicy.ALL,
                max_deliver=self._bus.max_deliver,
                ack_wait=self._bus.ack_wait_seconds,
                max_ack_pending=max(self._batch_size * 4, 256),
                filter_subject=subject,
            )
            self._bus.watch_backlog(name, subject)
            self._subscriptions.append(
                await jetstream.pull_subscribe(
                    subject, durable=name, stream=self._bus.stream.name, config=config
                )
            )
        self._task = asyncio.create_task(self._run(), name=f"lanes:{self._durable}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for subscription in self._subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()  # type: ignore[attr-defined]
        self._subscriptions.clear()

    def pause(self) -> None:
        """Stop taking new batches (the one in hand finishes); ``resume`` goes on."""
        self._paused.clear()

    def resume(self) -> None:
        self._paused.set()

    async def _run(self) -> None:
        while True:
            await self._paused.wait()
            try:
                messages = await self._next_batch()
            except asyncio.CancelledError:
                raise
            except Exception:  # the connection is reconnecting: try again shortly
                log.warning("lane %s: fetch failed", self._durable, exc_info=True)
                await asyncio.sleep(self._idle_wait)
                continue
            if messages and not self._paused.is_set():  # paused during the fetch: hand back
                for message in messages:
                    with contextlib.suppress(Exception):
                        await message.nak()
                continue
            if messages:
                try:
                    await self._process(messages)
                except asyncio.CancelledError:
                    # Stopped with a batch in hand: hand it back for another consumer now
                    # rather than after the ack deadline (settled messages ignore the nak).
                    for message in messages:
                        with contextlib.suppress(Exception):
                            await message.nak()
                    raise
                except Exception:  # never let the lane die; the messages are redelivered
                    log.exception("lane %s: batch failed", self._durable)

    async def _next_batch(self) -> list[Msg]:
        """The next batch from the most valuable subject that has messages; when every lane
        is empty, waits up to ``idle_wait_seconds`` on the most valuable one."""
        for subscription in self._subscriptions:
            with contextlib.suppress(nats.errors.TimeoutError, asyncio.TimeoutError):
                messages: list[Msg] = await subscription.fetch(  # type: ignore[attr-defined]
                    self._batch_size, timeout=0.05
                )
                if messages:
                    return messages
        with contextlib.suppress(nats.errors.TimeoutError, asyncio.TimeoutError):
            first = self._subscriptions[0]
            return list(
                await first.fetch(  # type: ignore[attr-defined]
                    self._batch_size, timeout=self._idle_wait
                )
            )
        return []

    async def _process(self, messages: list[Msg]) -> None:
        items: list[tuple[LaneItem[EventT], Msg]] = []
        for message in messages:
            item = await self._decode(message)
            if item is not None:
                items.append((item, message))
        if not items:
            return
        first_context = _context_of(items[0][1])
        links = [
            trace.Link(trace.get_current_span(_context_of(m)).get_span_context()) for _, m in items
        ]
        token = context.attach(first_context)
        try:
            with self._tracer.start_as_current_span(
                f"{self._durable} process batch",
                kind=trace.SpanKind.CONSUMER,
                links=links,
                attributes={"messaging.batch.message_count": len(items)},
            ) as span:
                request_id = baggage.get_baggage(REQUEST_ID_BAGGAGE_KEY)
                if request_id:
                    span.set_attribute(REQUEST_ID_ATTRIBUTE, str(request_id))
                await self._handle([item for item, _ in items], [m for _, m in items])
        finally:
            context.detach(token)

    async def _handle(self, items: list[LaneItem[EventT]], messages: list[Msg]) -> None:
        keep_alive = asyncio.create_task(keep_in_progress(messages, self._bus.ack_wait_seconds))
        started = time.perf_counter()
        try:
            await self._handle_kept_alive(items, messages)
        finally:
            keep_alive.cancel()
            EVENT_SECONDS.labels(self._durable, items[0].delivery.subject).observe(
                time.perf_counter() - started
            )

    async def _handle_kept_alive(self, items: list[LaneItem[EventT]], messages: list[Msg]) -> None:
        try:
            await self._handler(items)
        except Exception as error:
            if len(items) == 1:
                await self._failed(items[0], messages[0], error)
                return
            log.warning(
                "lane %s: batch of %d failed (%s); retrying one by one",
                self._durable,
                len(items),
                error,
            )
            for item, message in zip(items, messages, strict=True):
                item.rejected = ""
                await self._handle_kept_alive([item], [message])
            return
        for item, message in zip(items, messages, strict=True):
            if item.rejected:
                await self._bus.dead_letter_raw(
                    message, f"malformed: {item.rejected}", item.delivery.attempt, self._durable
                )
            await message.ack()
            self._count(message.subject, "dead_lettered" if item.rejected else "ok")

    async def _failed(self, item: LaneItem[EventT], message: Msg, error: Exception) -> None:
        if item.delivery.is_last_attempt:
            log.error("lane %s: giving up on %s", self._durable, item.delivery.message_id)
            await self._bus.dead_letter_raw(
                message, f"{type(error).__name__}: {error}", item.delivery.attempt, self._durable
            )
            await message.ack()
            self._count(message.subject, "dead_lettered")
        else:
            log.warning(
                "lane %s: delivery %d/%d of %s failed, will retry: %s",
                self._durable,
                item.delivery.attempt,
                item.delivery.max_deliver,
                item.delivery.message_id,
                error,
            )
            await message.nak(delay=self._bus.retry_backoff_seconds * item.delivery.attempt)
            self._count(message.subject, "retried")

    def _count(self, subject: str, outcome: str) -> None:
        EVENTS.labels(self._durable, subject, outcome).inc()

    async def _decode(self, message: Msg) -> LaneItem[EventT] | None:
        headers = dict(message.headers or {})
        attempt = int(message.metadata.num_delivered) if message.metadata else 1
        try:
            event = self._event_type.FromString(bytes(message.data))
        except DecodeError as error:
            await self._bus.dead_letter_raw(
                message, f"undecodable {self._event_type.__name__}: {error}", attempt, self._durable
            )
            await message.ack()
            self._count(message.subject, "dead_lettered")
            return None
        request_id = baggage.get_baggage(REQUEST_ID_BAGGAGE_KEY, context=_context_of(message))
        delivery = Delivery(
            subject=message.subject,
            attempt=attempt,
            max_deliver=self._bus.max_deliver,
            message_id=headers.get("Nats-Msg-Id", ""),
            request_id=str(request_id) if request_id else None,
            progress=message.in_progress,
        )
        return LaneItem(event, delivery, message.subject)


def _context_of(message: Msg) -> context.Context:
    """The trace context and baggage the publisher put in the message headers."""
    return propagate.extract(dict(message.headers or {}))
