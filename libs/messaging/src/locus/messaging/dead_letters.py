"""Reading and replaying the dead letters the bus keeps on ``<prefix>.dlq.<subject>``.

A dead letter (``events_pb2.DeadLetter``) holds the original subject, payload and headers, the
error, the consumer and when it failed. Listing reads them by stream sequence and never shows
their payload. Replaying republishes the payload to its original subject, with its headers
(trace context and baggage included) but a new ``Nats-Msg-Id`` — the original one is still in
the stream's duplicate window, or was already processed — and then deletes the letter, so it is
replayed once. The new id is ``replay:<stream>:<letter sequence>``: a replay repeated after a
failure between publish and delete is deduplicated. Every consumer of the subject gets the
replayed event again, not just the one that failed; handlers are idempotent by content.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import nats
from google.protobuf.message import DecodeError
from nats.aio.client import Client as NATS
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from locus.config.redaction import safe_message
from locus.messaging.credentials import BusCredentials
from locus.messaging.subjects import Subjects
from locus.v1 import events_pb2

REPLAY_OF_HEADER = "Locus-Replay-Of"
# Headers the server interprets for one publish (id, expected stream or sequence): never copied.
_SERVER_HEADER_PREFIX = "nats-"
# An error is shown to a person and kept short; the letter itself keeps up to 4,000 characters.
ERROR_CHARACTERS = 500


class DeadLetterNotFound(LookupError):
    """No dead letter at that stream sequence (never one, or already replayed)."""


class NotADeadLetter(ValueError):
    """A message on a dead-letter subject that does not decode as a ``DeadLetter``."""


@dataclass(frozen=True)
class StoredDeadLetter:
    """One dead letter as the stream holds it; ``error`` and ``message_id`` are redacted."""

    sequence: int
    dead_letter_subject: str
    subject: str
    consumer: str
    error: str
    deliveries: int
    failed_at: datetime | None
    payload_bytes: int
    message_id: str
    letter: events_pb2.DeadLetter | None  # None when the message is not a DeadLetter

    def to_json(self) -> dict[str, object]:
        """Stable keys for scripts; never the payload."""
        return {
            "sequence": self.sequence,
            "subject": self.subject,
            "dead_letter_subject": self.dead_letter_subject,
            "consumer": self.consumer,
            "error": self.error,
            "deliveries": self.deliveries,
            "failed_at": self.failed_at.isoformat() if self.failed_at else None,
            "payload_bytes": self.payload_bytes,
            "message_id": self.message_id,
        }


@dataclass(frozen=True)
class Replayed:
    """What replaying one dead letter did."""

    sequence: int
    subject: str
    message_id: str
    stream_sequence: int  # of the republished event
    duplicate: bool  # the server had it already (an earlier replay that was not removed)
    removed: bool

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _decode(sequence: int, subject: str, data: bytes, time: datetime | None) -> StoredDeadLetter:
    try:
        letter = events_pb2.DeadLetter.FromString(data)
    except DecodeError as error:
        return StoredDeadLetter(
            sequence=sequence,
            dead_letter_subject=subject,
            subject="",
            consumer="",
            error=safe_message(f"not a DeadLetter: {error}", ERROR_CHARACTERS),
            deliveries=0,
            failed_at=time,
            payload_bytes=len(data),
            message_id="",
            letter=None,
        )
    failed_at = letter.failed_at.ToDatetime(tzinfo=UTC) if letter.HasField("failed_at") else time
    return StoredDeadLetter(
        sequence=sequence,
        dead_letter_subject=subject,
        subject=letter.subject,
        consumer=letter.consumer,
        error=safe_message(letter.error, ERROR_CHARACTERS),
        deliveries=letter.deliveries,
        failed_at=failed_at,
        payload_bytes=len(letter.payload),
        message_id=safe_message(letter.headers.get("Nats-Msg-Id", ""), ERROR_CHARACTERS),
        letter=letter,
    )


def replay_headers(
    letter: events_pb2.DeadLetter, message_id: str, replay_of: str
) -> dict[str, str]:
    """The original headers without the server's per-publish ones, a new id and where the
    event comes from."""
    headers = {
        key: value
        for key, value in letter.headers.items()
        if not key.lower().startswith(_SERVER_HEADER_PREFIX)
    }
    headers["Nats-Msg-Id"] = message_id
    headers[REPLAY_OF_HEADER] = replay_of
    return headers


class DeadLetters:
    """The dead letters of one stream, read and replayed through a JetStream context."""

    def __init__(
        self,
        jetstream: JetStreamContext,
        *,
        stream: str = "LOCUS",
        subjects: Subjects | None = None,
        connection: NATS | None = None,
    ) -> None:
        self._jetstream = jetstream
        self._connection = connection
        self.stream = stream
        self.subjects = subjects or Subjects()

    async def close(self) -> None:
        """Close the connection this object owns (from `connect_dead_letters`)."""
        if self._connection is not None:
            await self._connection.close()

    def filter_subject(self, subject: str | None = None) -> str:
        """The dead-letter subject (wildcards allowed) for ``subject``: an original subject
        (``locus.v1.files.changed``), one without the prefix (``files.changed``, ``files.>``)
        or a dead-letter subject itself; every dead letter when None."""
        prefix = self.subjects.prefix
        dead_letter_prefix = f"{prefix}.dlq."
        if not subject:
            return f"{dead_letter_prefix}>"
        if subject.startswith(dead_letter_prefix):
            return subject
        if subject.startswith("dlq."):
            return f"{prefix}.{subject}"
        full = subject if subject.startswith(prefix + ".") else f"{prefix}.{subject}"
        return self.subjects.dead_letter(full)

    async def iterate(self, subject: str | None = None) -> AsyncIterator[StoredDeadLetter]:
        """Every dead letter (on ``subject``'s dead-letter subject), oldest first."""
        filter_subject = self.filter_subject(subject)
        sequence = 1
        while True:
            try:
                message = await self._jetstream.get_msg(
                    self.stream, seq=sequence, subject=filter_subject, next=True
                )
            except NotFoundError:
                return
            assert message.seq is not None
            yield _decode(message.seq, message.subject or "", message.data or b"", message.time)
            sequence = message.seq + 1

    async def list(
        self, subject: str | None = None, *, limit: int | None = None
    ) -> list[StoredDeadLetter]:
        """The oldest ``limit`` dead letters (all when None)."""
        found: list[StoredDeadLetter] = []
        async for letter in self.iterate(subject):
            if limit is not None and len(found) >= limit:
                break
            found.append(letter)
        return found

    async def get(self, sequence: int, subject: str | None = None) -> StoredDeadLetter:
        """The dead letter at stream ``sequence`` (one of ``subject``'s, as `filter_subject`
        reads it, when given); `DeadLetterNotFound` when there is none."""
        try:
            # The first message at or after ``sequence`` on the filter: the server matches it.
            message = await self._jetstream.get_msg(
                self.stream, seq=sequence, subject=self.filter_subject(subject), next=True
            )
        except NotFoundError:
            message = None
        if message is None or message.seq != sequence:
            of = f" of {subject}" if subject else ""
            raise DeadLetterNotFound(f"the message at sequence {sequence} is no dead letter{of}")
        return _decode(sequence, message.subject or "", message.data or b"", message.time)

    async def replay(self, stored: StoredDeadLetter) -> Replayed:
        """Republish the letter's event to its original subject, then delete the letter."""
        letter = stored.letter
        if letter is None or not letter.subject:
            raise NotADeadLetter(
                f"the message at sequence {stored.sequence} is not a dead letter: {stored.error}"
            )
        replay_of = f"{self.stream}:{stored.sequence}"
        message_id = f"replay:{replay_of}"
        ack = await self._jetstream.publish(
            letter.subject,
            letter.payload,
            stream=self.stream,
            headers=replay_headers(letter, message_id, replay_of),
        )
        try:
            removed = bool(await self._jetstream.delete_msg(self.stream, stored.sequence))
        except NotFoundError:  # removed meanwhile (another replay): it is gone either way
            removed = True
        return Replayed(
            sequence=stored.sequence,
            subject=letter.subject,
            message_id=message_id,
            stream_sequence=int(ack.seq),
            duplicate=bool(ack.duplicate),
            removed=removed,
        )


async def _ignore_connection_error(error: Exception) -> None:
    return None


async def connect_dead_letters(
    nats_url: str,
    *,
    stream: str = "LOCUS",
    subjects: Subjects | None = None,
    connect_timeout_seconds: float = 5.0,
    credentials: BusCredentials | None = None,
) -> DeadLetters:
    """`DeadLetters` on a connection of its own, without reconnects (a command's, not a
    service's); ``close()`` it."""
    connection = await nats.connect(
        nats_url,
        **(credentials or BusCredentials()).connect_options(),
        connect_timeout=connect_timeout_seconds,
        allow_reconnect=False,
        # 1, not 0: with 0 nats-py retries an unreachable server forever.
        max_reconnect_attempts=1,
        error_cb=_ignore_connection_error,  # the failure is raised; nats-py would print it too
    )
    return DeadLetters(
        connection.jetstream(), stream=stream, subjects=subjects, connection=connection
    )


@asynccontextmanager
async def open_dead_letters(
    nats_url: str,
    *,
    stream: str = "LOCUS",
    subjects: Subjects | None = None,
    credentials: BusCredentials | None = None,
) -> AsyncIterator[DeadLetters]:
    """`connect_dead_letters` for the duration of the block."""
    queue = await connect_dead_letters(
        nats_url, stream=stream, subjects=subjects, credentials=credentials
    )
    try:
        yield queue
    finally:
        await queue.close()
