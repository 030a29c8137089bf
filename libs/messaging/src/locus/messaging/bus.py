"""The event bus: FastStream's NatsBroker with tracing, one JetStream stream for all Locus
subjects, durable pull consumers with bounded redelivery, and dead letters that keep the
message, its headers and the error.

Delivery rules of every consumer:
- an event that cannot be decoded, or that its handler rejects as malformed, can never
  succeed: it goes to the dead-letter subject at once and is acknowledged;
- any other failure is retried (nak with back-off) until ``max_deliver`` deliveries, then the
  message goes to the dead-letter subject and is acknowledged, so the consumer keeps going.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

from faststream.middlewares import AckPolicy
from faststream.nats import ConsumerConfig, JStream, NatsBroker, NatsMessage, PullSub
from faststream.nats.opentelemetry import NatsTelemetryMiddleware
from google.protobuf.message import DecodeError, Message
from nats.aio.msg import Msg
from nats.js.api import PubAck
from nats.js.client import JetStreamContext
from opentelemetry import baggage, context, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator

from locus.config import ServiceSettings, StartupRefused
from locus.config.redaction import redact
from locus.messaging.credentials import AUTHORIZATION_HINT, BusCredentials
from locus.messaging.delivery import Delivery, keep_in_progress
from locus.messaging.lanes import LaneHandler, PriorityLanes
from locus.messaging.subjects import Subjects
from locus.telemetry import (
    REQUEST_ID_ATTRIBUTE,
    REQUEST_ID_BAGGAGE_KEY,
    Telemetry,
    current_request_id,
)
from locus.telemetry.metrics import (
    CONSUMER_ACK_PENDING,
    CONSUMER_PENDING,
    DEAD_LETTERS,
    EVENT_SECONDS,
    EVENTS,
    INDEXED_FILES,
)
from locus.v1 import events_pb2

log = logging.getLogger(__name__)
_FASTSTREAM_LOGGER = "faststream"
_NATS_FETCH_SOURCE = "/nats/js/client.py"


class EmptyFetchFilter(logging.Filter):
    """Drops FastStream's "Task-N raised an exception, retrying..." when the exception is a
    pull consumer's fetch that timed out with no message: nats-py 2.16 raises a plain
    ``asyncio.TimeoutError`` there (nats.py #934), which FastStream 0.7.8 does not take for
    its own empty-fetch timeout, so its supervisor logs an ERROR traceback and restarts the
    poll at once. Nothing failed; every other task failure is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, TimeoutError) or "retrying" not in record.getMessage():
            return True
        frame = error.__traceback__
        while frame is not None:
            if frame.tb_frame.f_code.co_filename.endswith(_NATS_FETCH_SOURCE):
                return False
            frame = frame.tb_next
        return True


def adopt_faststream_logging() -> logging.Logger:
    """FastStream's logger, writing through the service's own handlers (its format, JSON
    lines, trace and request ids, secret redaction) instead of the coloured stderr handler
    FastStream adds at import, and without the empty-fetch noise (``EmptyFetchFilter``)."""
    logger = logging.getLogger(_FASTSTREAM_LOGGER)
    logger.handlers.clear()
    logger.propagate = True
    if not any(isinstance(f, EmptyFetchFilter) for f in logger.filters):
        logger.addFilter(EmptyFetchFilter())
    return logger


EventT = TypeVar("EventT", bound=Message)
# Told of a dead-lettered message: its event (None when undecodable) and the reason.
DeadLetterHook = Callable[[EventT | None, str], Awaitable[None]]


async def _tell(
    hook: Callable[[Any, str], Awaitable[None]] | None, event: Message | None, reason: str
) -> None:
    """Run a dead-letter hook; its failure is logged, never lost work (the letter is stored)."""
    if hook is None:
        return
    try:
        await hook(event, reason)
    except Exception:
        log.exception("the dead-letter hook failed (the letter itself is stored)")


_BAGGAGE = W3CBaggagePropagator()


def _count_reports(event: events_pb2.IndexUpdated) -> None:
    """Scan progress as metrics: the file reports of each stage, by status."""
    counts: dict[int, int] = {}
    for report in event.files:
        counts[report.status] = counts.get(report.status, 0) + 1
    for status, count in counts.items():
        name = events_pb2.IndexStatus.Name(status).removeprefix("INDEX_STATUS_").lower()
        INDEXED_FILES.labels(event.stage or "unknown", name).inc(count)


async def wait_for_server(url: str, *, first_delay: float = 0.5, max_delay: float = 10.0) -> None:
    """Until one of the NATS servers in ``url`` (comma-separated) accepts a TCP connection:
    each failed round is logged with the reason (the URL without credentials), so a service
    whose bus is unreachable says so instead of waiting silently; cancellable (SIGTERM)."""
    servers = [urlsplit(part.strip()) for part in url.split(",") if part.strip()]
    delay, waited = first_delay, 0.0
    while True:
        problems = []
        for server in servers:
            port = server.port or (
                443 if server.scheme == "wss" else 80 if server.scheme == "ws" else 4222
            )
            try:
                _, writer = await asyncio.wait_for(
                    asyncio.open_connection(server.hostname or "127.0.0.1", port), timeout=5
                )
            except (OSError, TimeoutError) as error:
                problems.append(f"{server.hostname}:{port}: {error or type(error).__name__}")
                continue
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            if waited:
                log.info("NATS reachable after %.0f s", waited)
            return
        log.warning(
            "cannot reach NATS at %s (%s); retrying in %.1f s",
            redact(url),
            "; ".join(problems),
            delay,
        )
        await asyncio.sleep(delay)
        waited += delay
        delay = min(delay * 2, max_delay)


class MalformedEvent(Exception):
    """Raised by a handler for an event that can never be processed (missing fields, ...)."""


class EventBus:
    """One per process. Register consumers with ``subscribe`` before ``start``."""

    def __init__(
        self,
        url: str,
        telemetry: Telemetry,
        *,
        subjects: Subjects | None = None,
        stream_name: str = "LOCUS",
        max_deliver: int = 5,
        ack_wait_seconds: float = 30.0,
        retry_backoff_seconds: float = 0.5,
        max_age_days: float = 7.0,
        graceful_timeout_seconds: float = 10.0,
        stream_replicas: int = 1,
        credentials: BusCredentials | None = None,
    ) -> None:
        self.subjects = subjects or Subjects()
        self._url = url
        self.max_deliver = max_deliver
        self.ack_wait_seconds = ack_wait_seconds
        self.retry_backoff_seconds = retry_backoff_seconds
        self.tracer = telemetry.tracer("locus.messaging")
        self._lanes: list[PriorityLanes[Any]] = []
        self.broker = NatsBroker(
            url,
            middlewares=(NatsTelemetryMiddleware(tracer_provider=telemetry.provider),),
            logger=adopt_faststream_logging(),
            max_reconnect_attempts=-1,
            graceful_timeout=graceful_timeout_seconds,
            security=(credentials or BusCredentials()).security(),
        )
        self.stream = JStream(
            name=stream_name,
            subjects=[self.subjects.all],
            max_age=max_age_days * 86400,
            duplicate_window=120.0,
            num_replicas=stream_replicas,
        )
        self._started = False
        # (durable, filter subject) of every consumer, for the backlog gauges.
        self._consumers: list[tuple[str, str]] = []
        self._backlog_task: asyncio.Task[None] | None = None
        self.backlog_interval_seconds = 5.0

    @classmethod
    def from_settings(cls, settings: ServiceSettings, telemetry: Telemetry) -> EventBus:
        return cls(
            settings.nats_url,
            telemetry,
            subjects=Subjects(settings.subject_prefix),
            stream_name=settings.stream_name,
            max_deliver=settings.max_deliver,
            ack_wait_seconds=settings.ack_wait_seconds,
            graceful_timeout_seconds=settings.shutdown_grace_seconds,
            stream_replicas=settings.stream_replicas,
            credentials=BusCredentials.from_settings(settings),
        )

    async def start(self) -> None:
        await wait_for_server(self._url)
        try:
            await self.broker.start()
        except Exception as error:
            if "authorization" in str(error).lower():
                # Not retried: the same credentials are refused again.
                raise StartupRefused(
                    f"NATS at {redact(self._url)} refused this service's credentials "
                    f"({redact(str(error))}); {AUTHORIZATION_HINT}"
                ) from None
            raise
        self._started = True
        await self.ensure_stream()
        for lanes in self._lanes:
            await lanes.start()
        self._backlog_task = asyncio.create_task(self._watch_backlogs())

    def jetstream(self) -> JetStreamContext:
        """The JetStream context of the started broker (for consumers FastStream cannot
        express, such as priority lanes)."""
        # FastStream keeps the JetStream context of a started broker here.
        jetstream: JetStreamContext = self.broker.config.connection_state.stream
        return jetstream

    def subscribe_lanes(
        self,
        subjects: Sequence[str],
        event_type: type[EventT],
        durable: str,
        handler: LaneHandler[EventT],
        *,
        batch_size: int,
        idle_wait_seconds: float = 1.0,
    ) -> PriorityLanes[EventT]:
        """Durable pull consumers on ``subjects``, drained most valuable first in batches of
        up to ``batch_size`` (see ``locus.messaging.lanes``); started and stopped with the bus."""
        lanes = PriorityLanes(
            self,
            subjects,
            event_type,
            durable,
            handler,
            batch_size=batch_size,
            idle_wait_seconds=idle_wait_seconds,
        )
        self._lanes.append(lanes)
        return lanes

    async def ensure_stream(self) -> None:
        """Declare the stream even in a process that only publishes (subscribers declare it
        too); a no-op when it exists with the same configuration."""
        jetstream = self.jetstream()
        try:
            await jetstream.add_stream(config=self.stream.config, subjects=[self.subjects.all])
        except Exception as error:  # declared by another service with other settings: use it
            log.info("stream %s not declared here: %s", self.stream.name, error)

    def watch_backlog(self, durable: str, subject: str) -> None:
        """Report the backlog of the durable consumer ``durable`` on ``subject`` (queue lag and
        messages in flight) as gauges, refreshed while the bus runs."""
        if (durable, subject) not in self._consumers:
            self._consumers.append((durable, subject))

    async def refresh_backlogs(self) -> None:
        """Read each watched consumer's pending counts from JetStream into the gauges."""
        jetstream = self.jetstream()
        for durable, subject in self._consumers:
            try:
                info = await jetstream.consumer_info(self.stream.name, durable)
            except Exception as error:  # not created yet, or the server is away: next time
                log.debug("no backlog for %s on %s: %s", durable, subject, error)
                continue
            CONSUMER_PENDING.labels(durable, subject).set(info.num_pending or 0)
            CONSUMER_ACK_PENDING.labels(durable, subject).set(info.num_ack_pending or 0)

    async def _watch_backlogs(self) -> None:
        while True:
            await self.refresh_backlogs()
            await asyncio.sleep(self.backlog_interval_seconds)

    async def stop(self) -> None:
        if self._backlog_task is not None:
            self._backlog_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._backlog_task
            self._backlog_task = None
        for lanes in self._lanes:
            await lanes.stop()
        if self._started:
            await self.broker.stop()
            self._started = False

    async def publish(
        self,
        subject: str,
        event: Message,
        *,
        message_id: str,
        headers: dict[str, str] | None = None,
    ) -> PubAck:
        """Publish to JetStream and wait for its PubAck. ``message_id`` must be deterministic
        for the work (e.g. ``parsed:<snapshot>:<file>:<sha>``) so a retry is deduplicated."""
        all_headers = {"Nats-Msg-Id": message_id, "content-type": "application/x-protobuf"}
        _BAGGAGE.inject(all_headers)  # the request ID rides in W3C baggage
        if headers:
            all_headers.update(headers)
        ack = await self.broker.publish(
            event.SerializeToString(), subject, headers=all_headers, stream=self.stream.name
        )
        if ack is None:
            raise RuntimeError(f"no PubAck for {subject}")
        if isinstance(event, events_pb2.IndexUpdated) and not ack.duplicate:
            _count_reports(event)
        return ack

    def subscribe(
        self,
        subject: str,
        event_type: type[EventT],
        durable: str,
        handler: Callable[[EventT, Delivery], Awaitable[None]],
        *,
        max_workers: int = 1,
        fetch_batch: int = 1,
        on_dead_letter: DeadLetterHook[EventT] | None = None,
    ) -> None:
        """A durable pull consumer named ``durable`` (the service name) on ``subject``.
        ``on_dead_letter`` is told of each message this consumer dead-letters (the decoded event,
        None when undecodable, and the reason), after the letter is stored: a service whose
        work item dies there can say so (ingestion fails the scan job at once)."""
        bus = self
        self.watch_backlog(durable, subject)

        @self.broker.subscriber(
            subject,
            stream=self.stream,
            durable=durable,
            pull_sub=PullSub(batch_size=fetch_batch, timeout=1.0),
            config=ConsumerConfig(
                max_deliver=self.max_deliver,
                ack_wait=self.ack_wait_seconds,
                max_ack_pending=max(64, max_workers * 4),
            ),
            ack_policy=AckPolicy.MANUAL,
            max_workers=max_workers,
        )
        async def consume(body: bytes, message: NatsMessage) -> None:
            await bus._consume(subject, event_type, durable, handler, body, message, on_dead_letter)

    async def _consume(
        self,
        subject: str,
        event_type: type[EventT],
        durable: str,
        handler: Callable[[EventT, Delivery], Awaitable[None]],
        body: bytes,
        message: NatsMessage,
        on_dead_letter: DeadLetterHook[EventT] | None = None,
    ) -> None:
        raw = message.raw_message
        headers = dict(raw.headers or {})
        attempt = int(raw.metadata.num_delivered) if raw.metadata else 1
        started = time.perf_counter()
        outcome = "failed"
        inbound_request_id = baggage.get_baggage(
            REQUEST_ID_BAGGAGE_KEY, context=_BAGGAGE.extract(headers)
        )
        token = (
            context.attach(baggage.set_baggage(REQUEST_ID_BAGGAGE_KEY, inbound_request_id))
            if inbound_request_id
            else None
        )
        try:
            request_id = current_request_id()
            if request_id:
                trace.get_current_span().set_attribute(REQUEST_ID_ATTRIBUTE, request_id)
            try:
                event = event_type.FromString(bytes(raw.data))
            except DecodeError as error:
                reason = f"undecodable {event_type.__name__}: {error}"
                await self._dead_letter(raw.subject, raw.data, headers, reason, attempt, durable)
                await _tell(on_dead_letter, None, reason)
                await message.ack()
                outcome = "dead_lettered"
                return
            delivery = Delivery(
                subject=raw.subject,
                attempt=attempt,
                max_deliver=self.max_deliver,
                message_id=headers.get("Nats-Msg-Id", ""),
                request_id=request_id,
                progress=message.in_progress,
            )
            keep_alive = asyncio.create_task(keep_in_progress([raw], self.ack_wait_seconds))
            try:
                await handler(event, delivery)
            except MalformedEvent as error:
                reason = f"malformed: {error}"
                await self._dead_letter(raw.subject, raw.data, headers, reason, attempt, durable)
                await _tell(on_dead_letter, event, reason)
                await message.ack()
                outcome = "dead_lettered"
                return
            except Exception as error:
                if attempt >= self.max_deliver:
                    log.exception("giving up on %s after %d deliveries", raw.subject, attempt)
                    reason = f"{type(error).__name__}: {error}"
                    await self._dead_letter(
                        raw.subject, raw.data, headers, reason, attempt, durable
                    )
                    await _tell(on_dead_letter, event, reason)
                    await message.ack()
                    outcome = "dead_lettered"
                else:
                    log.warning(
                        "delivery %d/%d of %s failed, will retry: %s",
                        attempt,
                        self.max_deliver,
                        raw.subject,
                        error,
                    )
                    await message.nack(delay=self.retry_backoff_seconds * attempt)
                    outcome = "retried"
                return
            finally:
                keep_alive.cancel()
            await message.ack()
            outcome = "ok"
        finally:
            EVENTS.labels(durable, subject, outcome).inc()
            EVENT_SECONDS.labels(durable, subject).observe(time.perf_counter() - started)
            if token is not None:
                context.detach(token)

    async def dead_letter_raw(
        self, message: Msg, error: str, deliveries: int, consumer: str
    ) -> None:
        """Dead-letter a message received outside FastStream (a lane)."""
        await self._dead_letter(
            message.subject,
            message.data,
            dict(message.headers or {}),
            error,
            deliveries,
            consumer,
        )

    async def _dead_letter(
        self,
        subject: str,
        payload: bytes,
        headers: dict[str, str],
        error: str,
        deliveries: int,
        consumer: str,
    ) -> None:
        letter = events_pb2.DeadLetter(
            subject=subject,
            payload=bytes(payload),
            headers={k: str(v) for k, v in headers.items()},
            error=error[:4000],
            deliveries=deliveries,
            consumer=consumer,
        )
        letter.failed_at.FromDatetime(datetime.now(UTC))
        original_id = headers.get("Nats-Msg-Id", "")
        dlq_id = f"dlq:{consumer}:{original_id or subject}:{deliveries}"
        log.error("dead-lettering %s (%s): %s", subject, consumer, error)
        DEAD_LETTERS.labels(consumer, subject).inc()
        for attempt in range(5):
            try:
                await self.publish(self.subjects.dead_letter(subject), letter, message_id=dlq_id)
                return
            except Exception:  # the letter must not be lost: retry, then let the caller nak
                if attempt == 4:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))
