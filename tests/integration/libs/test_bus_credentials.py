"""NATS requires credentials (docs/adr/0009), against a real nats-server started with an
authorization block: anonymous clients and wrong passwords are refused, the configured user is
accepted by nats-py, the event bus and the dead-letter reader; a bus with wrong credentials
refuses to start with a message that names the settings and not the password."""

from __future__ import annotations

import asyncio
import secrets
import stat
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client as NATS
from nats.errors import Error as NatsError

from locus.config import CredentialSettings, SettingsError, StartupRefused
from locus.messaging import BusCredentials, EmbeddedNatsServer, EventBus, open_dead_letters
from locus.messaging.subjects import Subjects
from locus.telemetry import setup_telemetry
from locus.v1 import events_pb2

pytestmark = pytest.mark.integration

USER = "locus"


@pytest.fixture
def password() -> str:
    return secrets.token_urlsafe(24)


@pytest.fixture
def guarded_nats(tmp_path: Path, password: str) -> Iterator[EmbeddedNatsServer]:
    server = EmbeddedNatsServer(tmp_path / "nats", users={USER: password}, monitoring=True)
    server.start()
    yield server
    server.stop()


async def connect(url: str, **options: object) -> NATS:
    return await nats.connect(
        url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=5, **options
    )


async def test_an_anonymous_client_is_refused(guarded_nats: EmbeddedNatsServer) -> None:
    with pytest.raises(NatsError, match="Authorization Violation"):
        await connect(guarded_nats.url)


async def test_a_wrong_password_is_refused(guarded_nats: EmbeddedNatsServer) -> None:
    wrong = BusCredentials(USER, "not-the-password")
    with pytest.raises(NatsError, match="Authorization Violation"):
        await connect(guarded_nats.url, **wrong.connect_options())


async def test_the_configured_user_is_accepted(
    guarded_nats: EmbeddedNatsServer, password: str
) -> None:
    client = await connect(guarded_nats.url, **BusCredentials(USER, password).connect_options())
    try:
        await client.flush(timeout=5)
    finally:
        await client.close()


def test_the_passwords_never_reach_the_command_line_and_their_file_is_private(
    guarded_nats: EmbeddedNatsServer, password: str
) -> None:
    assert guarded_nats.pid is not None
    command_line = Path(f"/proc/{guarded_nats.pid}/cmdline").read_bytes()
    assert password.encode() not in command_line
    config = guarded_nats.store_dir / "nats.conf"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_monitoring_listens_on_loopback_only(guarded_nats: EmbeddedNatsServer) -> None:
    assert guarded_nats.monitoring_url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(f"{guarded_nats.monitoring_url}/healthz", timeout=5) as reply:
        assert reply.status == 200


async def test_the_event_bus_and_the_dead_letter_reader_connect_with_the_credentials(
    guarded_nats: EmbeddedNatsServer, password: str, tmp_path: Path
) -> None:
    password_file = tmp_path / "nats-password"
    password_file.write_text(password + "\n")
    credentials = BusCredentials.from_settings(
        CredentialSettings(nats_user=USER, nats_password_file=password_file)
    )
    suffix = uuid.uuid4().hex[:8]
    subjects = Subjects(f"locus.t{suffix}.v1")
    bus = EventBus(
        guarded_nats.url,
        setup_telemetry("bus-credentials-test", from_environment=False),
        subjects=subjects,
        stream_name=f"LOCUS_T{suffix.upper()}",
        credentials=credentials,
    )
    await bus.start()
    try:
        ack = await bus.publish(
            subjects.scan_requested, events_pb2.ScanRequested(job_id="j1"), message_id="m1"
        )
        assert ack.seq >= 1
        async with open_dead_letters(
            guarded_nats.url,
            stream=f"LOCUS_T{suffix.upper()}",
            subjects=subjects,
            credentials=credentials,
        ) as letters:
            assert await letters.list() == []
    finally:
        await bus.stop()


async def test_a_bus_with_wrong_credentials_refuses_to_start_without_showing_them(
    guarded_nats: EmbeddedNatsServer,
) -> None:
    wrong = "wrong-password-for-this-test"
    bus = EventBus(
        guarded_nats.url,
        setup_telemetry("bus-credentials-test", from_environment=False),
        credentials=BusCredentials(USER, wrong),
    )
    with pytest.raises(StartupRefused) as refused:
        await asyncio.wait_for(bus.start(), timeout=30)
    message = str(refused.value)
    assert "LOCUS_NATS_USER" in message
    assert "LOCUS_NATS_PASSWORD" in message
    assert wrong not in message
    await bus.stop()


def test_a_password_without_a_user_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="LOCUS_NATS_USER"):
        BusCredentials.from_settings(CredentialSettings(nats_password="secret-value"))
