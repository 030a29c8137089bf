"""The event bus against a real nats-server: deduplication, bounded redelivery, dead letters,
request IDs and trace context through message headers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.messaging import Delivery, EmbeddedNatsServer, EventBus, MalformedEvent
from locus.telemetry import setup_telemetry, with_request_id
from locus.v1 import events_pb2

pytestmark = pytest.mark.integration


async def wait_for(condition: Callable[[], bool], within_seconds: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + within_seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


@pytest.fixture
async def bus_factory(
    nats_server: EmbeddedNatsServer, span_exporter: InMemorySpanExporter
) -> AsyncIterator[Callable[..., Awaitable[EventBus]]]:
    buses: list[EventBus] = []
    telemetry = setup_telemetry("bus-test", exporters=[span_exporter], from_environment=False)

    async def make(register: Callable[[EventBus], None], **options: object) -> EventBus:
        bus = EventBus(
            nats_server.url,
            telemetry,
            retry_backoff_seconds=0.05,
            **options,  # type: ignore[arg-type]
        )
        register(bus)
        await bus.start()
        buses.append(bus)
        return bus

    yield make
    for bus in buses:
        await bus.stop()


async def test_same_message_id_is_delivered_once(
    bus_factory: Callable[..., Awaitable[EventBus]],
) -> None:
    seen: list[str] = []

    async def handler(event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        seen.append(event.job_id)

    bus = await bus_factory(
        lambda b: b.subscribe(b.subjects.scan_requested, events_pb2.ScanRequested, "t", handler)
    )
    first = await bus.publish(
        bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="j1"), message_id="k1"
    )
    second = await bus.publish(
        bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="j1"), message_id="k1"
    )
    await bus.publish(
        bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="j2"), message_id="k2"
    )
    await wait_for(lambda: "j2" in seen)
    await asyncio.sleep(0.3)
    assert not first.duplicate
    assert second.duplicate is True
    assert seen == ["j1", "j2"]


async def test_failing_event_is_dead_lettered_after_max_deliver_and_consumer_goes_on(
    bus_factory: Callable[..., Awaitable[EventBus]],
) -> None:
    attempts: list[int] = []
    processed: list[str] = []
    letters: list[events_pb2.DeadLetter] = []

    async def handler(event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        if event.job_id == "poison":
            attempts.append(delivery.attempt)
            raise RuntimeError("store exploded")
        processed.append(event.job_id)

    async def on_letter(letter: events_pb2.DeadLetter, delivery: Delivery) -> None:
        letters.append(letter)

    def register(b: EventBus) -> None:
        b.subscribe(b.subjects.scan_requested, events_pb2.ScanRequested, "worker", handler)
        b.subscribe(
            b.subjects.dead_letter(b.subjects.scan_requested),
            events_pb2.DeadLetter,
            "dlq-watch",
            on_letter,
        )

    bus = await bus_factory(register, max_deliver=3)
    poison = events_pb2.ScanRequested(job_id="poison", project_id="p")
    await bus.publish(bus.subjects.scan_requested, poison, message_id="poison")
    await bus.publish(
        bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="next"), message_id="next"
    )
    await wait_for(lambda: bool(letters) and "next" in processed)
    assert attempts == [1, 2, 3]
    letter = letters[0]
    assert letter.subject == "locus.v1.scan.requested"
    assert letter.deliveries == 3
    assert "store exploded" in letter.error
    assert letter.consumer == "worker"
    assert events_pb2.ScanRequested.FromString(letter.payload) == poison
    assert letter.headers["Nats-Msg-Id"] == "poison"


async def test_undecodable_and_malformed_events_go_to_the_dead_letter_subject_at_once(
    bus_factory: Callable[..., Awaitable[EventBus]],
) -> None:
    processed: list[str] = []
    letters: list[events_pb2.DeadLetter] = []
    calls: list[str] = []

    async def handler(event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        calls.append(event.job_id)
        if not event.project_id:
            raise MalformedEvent("scan.requested needs project_id")
        processed.append(event.job_id)

    async def on_letter(letter: events_pb2.DeadLetter, delivery: Delivery) -> None:
        letters.append(letter)

    def register(b: EventBus) -> None:
        b.subscribe(b.subjects.scan_requested, events_pb2.ScanRequested, "worker", handler)
        b.subscribe(
            b.subjects.dead_letter(b.subjects.scan_requested),
            events_pb2.DeadLetter,
            "dlq-watch",
            on_letter,
        )

    bus = await bus_factory(register, max_deliver=4)
    await bus.broker.publish(
        b"\xff\xfe not protobuf",
        bus.subjects.scan_requested,
        headers={"Nats-Msg-Id": "garbage"},
        stream=bus.stream.name,
    )
    await bus.publish(
        bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="no-project"), message_id="m"
    )
    await bus.publish(
        bus.subjects.scan_requested,
        events_pb2.ScanRequested(job_id="good", project_id="p"),
        message_id="g",
    )
    await wait_for(lambda: len(letters) == 2 and processed == ["good"])
    errors = sorted(letter.error for letter in letters)
    assert errors[0].startswith("malformed: scan.requested needs project_id")
    assert errors[1].startswith("undecodable ScanRequested")
    assert all(letter.deliveries == 1 for letter in letters)
    assert calls.count("no-project") == 1  # never redelivered


async def test_request_id_and_trace_cross_the_bus(
    bus_factory: Callable[..., Awaitable[EventBus]], span_exporter: InMemorySpanExporter
) -> None:
    received: list[str | None] = []

    async def handler(event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        received.append(delivery.request_id)

    bus = await bus_factory(
        lambda b: b.subscribe(b.subjects.scan_requested, events_pb2.ScanRequested, "t", handler)
    )
    with with_request_id("req-42"):
        await bus.publish(
            bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="j"), message_id="x"
        )
    await wait_for(lambda: bool(received))
    assert received == ["req-42"]
    spans = span_exporter.get_finished_spans()
    publish = next(s for s in spans if s.name.endswith("scan.requested publish"))
    process = next(s for s in spans if s.name.endswith("scan.requested process"))
    assert publish.context.trace_id == process.context.trace_id
    assert publish.attributes["locus.request_id"] == "req-42"
    assert process.attributes["locus.request_id"] == "req-42"


async def test_work_longer_than_the_ack_wait_is_not_redelivered_while_it_runs(
    bus_factory: Callable[..., Awaitable[EventBus]],
) -> None:
    """The consumer says it is still at work (every third of ack_wait), so a short ack_wait —
    which bounds how late a crashed process's work is redone — never duplicates slow work."""
    calls: list[int] = []

    async def slow(event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        calls.append(delivery.attempt)
        await asyncio.sleep(5.0)

    bus = await bus_factory(
        lambda b: b.subscribe(
            b.subjects.scan_requested, events_pb2.ScanRequested, "slow", slow, max_workers=2
        ),
        ack_wait_seconds=1.5,
    )
    await bus.publish(
        bus.subjects.scan_requested, events_pb2.ScanRequested(job_id="j1"), message_id="slow-1"
    )
    await wait_for(lambda: len(calls) == 1)
    await asyncio.sleep(6.0)
    assert calls == [1]
