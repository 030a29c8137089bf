"""Credentials never leave in a message: URLs, secret parameters and bearer tokens are
redacted, long input is bounded, and log lines go through the same rules."""

from __future__ import annotations

import logging

import pytest

from locus.telemetry import configure_logging, redact, safe_message

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nats://locus:s3cret@nats:4222", "nats://***@nats:4222"),
        (
            "cannot reach postgresql+asyncpg://app:pw@db/locus (refused)",
            "cannot reach postgresql+asyncpg://***@db/locus (refused)",
        ),
        ("http://llm:8000/v1?api_key=sk-123&model=x", "http://llm:8000/v1?api_key=***&model=x"),
        ("Authorization: Bearer eyJhbGciOi.abc.def", "Authorization: Bearer ***"),
        ("password=hunter2 user=locus", "password=*** user=locus"),
        ("http://llm:8000/v1 without credentials", "http://llm:8000/v1 without credentials"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_safe_message_bounds_long_input() -> None:
    message = safe_message("no job " + "j" * 20_000)
    assert len(message) < 2_100
    assert message.endswith("(18007 more characters not shown)")
    wide = safe_message("日" * 5000)
    assert len(wide.encode()) < 2_100
    assert wide.startswith("日" * 666)


def test_log_lines_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("test", level="INFO")
    try:
        raise ConnectionError("nats://admin:topsecret@10.0.0.1:4222 refused")
    except ConnectionError:
        logging.getLogger("locus.test").exception(
            "cannot connect to %s", "nats://admin:topsecret@10.0.0.1:4222"
        )
    logged = capsys.readouterr().err
    assert "cannot connect to nats://***@10.0.0.1:4222" in logged
    assert "ConnectionError" in logged
    assert "topsecret" not in logged
