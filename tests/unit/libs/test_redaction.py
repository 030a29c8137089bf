"""Credentials never leave in a message: URLs, secret parameters, bearer tokens, Locus API keys
(all but their public key id) and JWTs are redacted, long input is bounded, and log lines go
through the same rules."""

from __future__ import annotations

import logging

import pytest

from locus.telemetry import configure_logging, redact, safe_message

pytestmark = pytest.mark.unit

API_KEY = "lk_0123456789ab_" + "Zx9-_" * 8 + "abc"  # lk_<12 hex>_<43 url-safe characters>
JWT = (
    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiJhbGljZSIsImdyb3VwcyI6WyJkZXZzIl19"
    ".c2lnbmF0dXJlLWJ5dGVzLWhlcmVfLQ"
)


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
        (f"refused the key {API_KEY} (revoked)", "refused the key lk_0123456789ab_*** (revoked)"),
        (f"LOCUS_API_KEY={API_KEY}", "LOCUS_API_KEY=lk_0123456789ab_***"),
        (f"keys:{API_KEY},{API_KEY}", "keys:lk_0123456789ab_***,lk_0123456789ab_***"),
        (f"cut short: {API_KEY[:30]}", "cut short: lk_0123456789ab_***"),
        ("API key 0123456789ab is not valid", "API key 0123456789ab is not valid"),
        (f"the token {JWT} expired", "the token *** expired"),
        (f'{{"id_token": "{JWT}"}}', '{"id_token": "***"}'),
        (f"unsigned {JWT.rsplit('.', 1)[0]}. token", "unsigned *** token"),
        ("version eyJ.1 of a.b.c stays", "version eyJ.1 of a.b.c stays"),
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


def test_api_keys_and_tokens_in_log_lines_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("test", level="INFO")
    logging.getLogger("locus.test").warning("refused %s and %s", API_KEY, JWT)
    logged = capsys.readouterr().err
    assert "refused lk_0123456789ab_*** and ***" in logged
    assert API_KEY.split("_", 2)[2] not in logged
    assert JWT.split(".")[1] not in logged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x-locus-service-token: s3cr3t-t0ken", "x-locus-service-token: ***"),
        ("(('x-locus-service-token', 's3cr3t-t0ken'),)", "(('x-locus-service-token', '***'),)"),
        ("LOCUS_SERVICE_TOKEN=s3cr3t-t0ken ok", "LOCUS_SERVICE_TOKEN=*** ok"),
        (
            "LOCUS_SERVICE_TOKEN_FILE=/run/secrets/token",
            "LOCUS_SERVICE_TOKEN_FILE=/run/secrets/token",
        ),
        (
            "needs the x-locus-service-token metadata header",
            "needs the x-locus-service-token metadata header",
        ),
    ],
)
def test_the_service_token_is_redacted_however_it_is_printed(text: str, expected: str) -> None:
    assert redact(text) == expected
