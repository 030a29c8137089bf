"""`locus dlq list` and `locus dlq replay` (the real console script) against a real nats-server:
dead letters produced by the real bus (a consumer that fails ``max_deliver`` times, a malformed
event), listed without their payload and with secrets redacted, replayed to a consumer that now
succeeds — consumed once, headers kept, the letter gone, a second replay refused."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from locus.messaging import (
    BusCredentials,
    Delivery,
    EmbeddedNatsServer,
    EventBus,
    MalformedEvent,
    Subjects,
    open_dead_letters,
)
from locus.telemetry import setup_telemetry, with_request_id
from locus.v1 import events_pb2

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

LOCUS = Path(sys.executable).parent / "locus"
SECRET = "hunter2-do-not-print"


async def wait_for(condition: Callable[[], bool], within_seconds: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + within_seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


@dataclass
class Worker:
    """A consumer on ``scan.requested`` and one on ``files.changed`` that fail while
    ``failing`` and record what they processed (and the request id each came with)."""

    failing: bool = True
    scans: list[tuple[str, str | None, str]] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    attempts: int = 0

    async def scan(self, event: events_pb2.ScanRequested, delivery: Delivery) -> None:
        if not event.project_id:
            raise MalformedEvent("scan.requested needs project_id")
        if self.failing:
            self.attempts += 1
            raise RuntimeError(f"store unreachable at postgresql://locus:{SECRET}@db:5432/x")
        self.scans.append((event.job_id, delivery.request_id, delivery.message_id))

    async def change(self, event: events_pb2.FilesChanged, delivery: Delivery) -> None:
        if self.failing or not event.job_id:
            raise MalformedEvent("files.changed needs job_id")
        self.changes.append(event.job_id)


@dataclass
class Bus:
    bus: EventBus
    worker: Worker
    environment: dict[str, str]
    url: str
    stream: str
    subjects: Subjects

    async def locus(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        """Run in a thread: the bus of this test keeps consuming meanwhile."""
        return await asyncio.to_thread(
            subprocess.run,
            [
                str(LOCUS), "dlq", *arguments,
                "--nats", self.url,
                "--stream", self.stream,
                "--subject-prefix", self.subjects.prefix,
            ],
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )  # fmt: skip

    async def listed(self, *arguments: str) -> list[dict[str, Any]]:
        result = await self.locus("list", "--json", *arguments)
        assert result.returncode == 0, result.stdout + result.stderr
        letters: list[dict[str, Any]] = json.loads(result.stdout)["dead_letters"]
        return letters

    async def letters(self) -> int:
        async with open_dead_letters(self.url, stream=self.stream, subjects=self.subjects) as dlq:
            return len(await dlq.list())


@pytest.fixture
async def bus(nats_server: EmbeddedNatsServer, tmp_path: Path) -> AsyncIterator[Bus]:
    suffix = uuid.uuid4().hex[:8]
    subjects = Subjects(f"dlqtest{suffix}.v1")
    stream = f"DLQTEST{suffix.upper()}"
    worker = Worker()
    event_bus = EventBus(
        nats_server.url,
        setup_telemetry("dlq-test", exporters=[], from_environment=False),
        subjects=subjects,
        stream_name=stream,
        max_deliver=2,
        retry_backoff_seconds=0.05,
    )
    event_bus.subscribe(subjects.scan_requested, events_pb2.ScanRequested, "worker", worker.scan)
    event_bus.subscribe(subjects.files_changed, events_pb2.FilesChanged, "changes", worker.change)
    await event_bus.start()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment["LOCUS_HOME"] = str(tmp_path / "home")  # no running stack to find
    try:
        yield Bus(event_bus, worker, environment, nats_server.url, stream, subjects)
    finally:
        await event_bus.stop()


async def test_a_dead_letter_is_listed_then_replayed_once_to_a_consumer_that_now_succeeds(
    bus: Bus,
) -> None:
    event = events_pb2.ScanRequested(job_id="job-1", project_id="p")
    with with_request_id("req-dlq-1"):
        await bus.bus.publish(bus.subjects.scan_requested, event, message_id="scan:job-1")
    await wait_for(lambda: bus.worker.attempts == 2)
    letters: list[dict[str, Any]] = []
    for _ in range(100):
        letters = await bus.listed()
        if letters:
            break
        await asyncio.sleep(0.1)

    assert len(letters) == 1
    letter = letters[0]
    assert letter["subject"] == bus.subjects.scan_requested
    assert letter["dead_letter_subject"] == bus.subjects.dead_letter(bus.subjects.scan_requested)
    assert letter["consumer"] == "worker"
    assert letter["deliveries"] == 2
    assert letter["message_id"] == "scan:job-1"
    assert letter["payload_bytes"] == len(event.SerializeToString())
    assert letter["failed_at"]
    assert "RuntimeError: store unreachable at postgresql://***@db:5432/x" in letter["error"]
    assert "payload" not in letter

    table = await bus.locus("list")
    assert table.returncode == 0, table.stderr
    assert str(letter["sequence"]) in table.stdout
    assert bus.subjects.scan_requested in table.stdout
    assert SECRET not in table.stdout + table.stderr
    assert SECRET not in json.dumps(letters)

    bus.worker.failing = False
    replayed = await bus.locus("replay", str(letter["sequence"]))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"replayed dead letter {letter['sequence']}" in replayed.stdout
    assert "letter removed" in replayed.stdout

    await wait_for(lambda: bool(bus.worker.scans))
    await asyncio.sleep(1.0)  # anything delivered twice would have arrived by now
    stream = bus.stream
    assert bus.worker.scans == [
        ("job-1", "req-dlq-1", f"replay:{stream}:{letter['sequence']}")
    ]  # once, with its request id (baggage header kept) and a new message id
    assert await bus.listed() == []
    assert await bus.letters() == 0

    again = await bus.locus("replay", str(letter["sequence"]))
    assert again.returncode == 1
    assert "not replayed" in again.stderr
    await asyncio.sleep(0.5)
    assert len(bus.worker.scans) == 1


async def test_replay_all_of_one_subject_leaves_the_others(bus: Bus) -> None:
    await bus.bus.publish(
        bus.subjects.scan_requested,
        events_pb2.ScanRequested(job_id="no-project"),
        message_id="scan:no-project",
    )
    await bus.bus.publish(
        bus.subjects.files_changed, events_pb2.FilesChanged(job_id="job-2"), message_id="fc:2"
    )
    for _ in range(100):
        if len(await bus.listed()) == 2:
            break
        await asyncio.sleep(0.1)
    assert len(await bus.listed()) == 2
    only_changes = await bus.listed("--subject", "files.changed")
    assert [letter["subject"] for letter in only_changes] == [bus.subjects.files_changed]
    assert only_changes[0]["error"].startswith("malformed: files.changed needs job_id")
    assert len(await bus.listed("--limit", "1")) == 1

    wrong = await bus.locus(
        "replay", str(only_changes[0]["sequence"]), "--subject", "scan.requested"
    )
    assert wrong.returncode == 1  # a SEQ outside --subject is refused, not replayed

    bus.worker.failing = False
    replayed = await bus.locus("replay", "--all", "--subject", "files.changed", "--json")
    assert replayed.returncode == 0, replayed.stderr
    report = json.loads(replayed.stdout)
    assert [r["sequence"] for r in report["replayed"]] == [only_changes[0]["sequence"]]
    assert report["replayed"][0]["removed"] is True
    await wait_for(lambda: bus.worker.changes == ["job-2"])
    left = await bus.listed()
    assert [letter["subject"] for letter in left] == [bus.subjects.scan_requested]

    usage = await bus.locus("replay")
    assert usage.returncode == 2  # neither --all nor SEQ


def test_without_a_stack_or_nats_url_the_command_says_so(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    environment["LOCUS_HOME"] = str(tmp_path / "home")
    result = subprocess.run(
        [str(LOCUS), "dlq", "list"],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert "no running Locus stack" in result.stderr
    unreachable = subprocess.run(
        [str(LOCUS), "dlq", "list", "--nats", f"nats://user:{SECRET}@127.0.0.1:1"],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert unreachable.returncode == 3
    assert "cannot reach NATS at nats://***@127.0.0.1:1" in unreachable.stderr
    assert SECRET not in unreachable.stderr


async def test_letters_that_cannot_be_replayed_are_reported_and_kept(bus: Bus) -> None:
    dead_letters = bus.subjects.dead_letter(bus.subjects.scan_requested)
    jetstream = bus.bus.jetstream()
    await jetstream.publish(dead_letters, b"\xff not a DeadLetter", stream=bus.stream)
    stray = events_pb2.DeadLetter(subject="elsewhere.no.stream", payload=b"x", consumer="w")
    await jetstream.publish(dead_letters, stray.SerializeToString(), stream=bus.stream)

    letters = await bus.listed()
    assert [letter["error"][:17] for letter in letters] == ["not a DeadLetter:", ""]
    replayed = await bus.locus("replay", "--all", "--json")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["replayed"] == []
    assert len(report["problems"]) == 2
    assert "is not a dead letter" in report["problems"][0]
    assert report["problems"][1].startswith(f"{letters[1]['sequence']}: ")
    assert len(await bus.listed()) == 2  # nothing removed that was not replayed


async def test_a_bus_that_requires_credentials_is_read_with_the_configured_user(
    tmp_path: Path,
) -> None:
    password = secrets.token_urlsafe(24)
    password_file = tmp_path / "nats-password"
    password_file.write_text(password + "\n")
    suffix = uuid.uuid4().hex[:8]
    subjects = Subjects(f"dlqauth{suffix}.v1")
    stream = f"DLQAUTH{suffix.upper()}"
    with EmbeddedNatsServer(tmp_path / "nats", users={"locus": password}) as server:
        event_bus = EventBus(
            server.url,
            setup_telemetry("dlq-test", exporters=[], from_environment=False),
            subjects=subjects,
            stream_name=stream,
            credentials=BusCredentials("locus", password),
        )
        await event_bus.start()
        try:
            environment = {
                k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))
            }
            environment["LOCUS_HOME"] = str(tmp_path / "home")
            bus = Bus(event_bus, Worker(), environment, server.url, stream, subjects)
            anonymous = await bus.locus("list", "--json")
            assert anonymous.returncode == 3, anonymous.stdout + anonymous.stderr
            assert "Authorization Violation" in anonymous.stderr
            bus.environment |= {
                "LOCUS_NATS_USER": "locus",
                "LOCUS_NATS_PASSWORD_FILE": str(password_file),
            }
            assert await bus.listed() == []
            assert password not in anonymous.stdout + anonymous.stderr
        finally:
            await event_bus.stop()
