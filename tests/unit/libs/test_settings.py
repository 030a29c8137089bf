"""Settings: stack-wide variables, per-service precedence, failing fast with a clear message,
credentials that never show."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
from pydantic_settings import SettingsConfigDict

from locus.config import ServiceSettings, SettingsError, load_settings

pytestmark = pytest.mark.unit


class DemoSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="LOCUS_DEMO_", extra="ignore")


def test_stack_wide_variable_applies_to_every_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_NATS_URL", "nats://10.0.0.1:4222")
    assert load_settings(DemoSettings).nats_url == "nats://10.0.0.1:4222"


def test_service_variable_wins_over_stack_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_NATS_URL", "nats://shared:4222")
    monkeypatch.setenv("LOCUS_DEMO_NATS_URL", "nats://mine:4222")
    assert load_settings(DemoSettings).nats_url == "nats://mine:4222"


def test_peer_addresses_come_from_locus_name_addr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_AST_ADDR", "ast.locus.svc:50052")
    assert load_settings(DemoSettings).peers.ast_addr == "ast.locus.svc:50052"


def test_invalid_value_fails_fast_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_DEMO_GRPC_PORT", "70000")
    with pytest.raises(SettingsError, match="LOCUS_DEMO_GRPC_PORT"):
        load_settings(DemoSettings)


def test_bad_nats_scheme_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_DEMO_NATS_URL", "http://localhost:4222")
    with pytest.raises(SettingsError, match="nats://"):
        load_settings(DemoSettings)


def test_sqlite_default_lives_in_data_dir(tmp_path: object) -> None:
    settings = DemoSettings(data_dir=tmp_path)  # type: ignore[arg-type]
    url = settings.sqlalchemy_url("demo.db")
    assert url.startswith("sqlite+aiosqlite:///")
    assert url.endswith("demo.db")
    assert DemoSettings(database_url="postgresql://u@h/db").sqlalchemy_url("x.db") == (
        "postgresql://u@h/db"
    )


def test_a_settings_error_never_shows_the_password_of_a_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCUS_DEMO_NATS_URL", "http://locus:hunter2@localhost:4222")
    with pytest.raises(SettingsError) as raised:
        load_settings(DemoSettings)
    shown = "".join(traceback.format_exception(raised.value))
    assert "LOCUS_DEMO_NATS_URL" in shown
    assert "hunter2" not in shown


def test_credentials_are_stack_wide_and_a_service_may_override_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCUS_SERVICE_TOKEN", "the-stack-wide-token-0123456789")
    monkeypatch.setenv("LOCUS_NATS_USER", "locus")
    monkeypatch.setenv("LOCUS_NATS_PASSWORD_FILE", str(tmp_path / "nats-password"))
    monkeypatch.setenv("LOCUS_TLS_CA_FILE", str(tmp_path / "ca.crt"))
    settings = load_settings(DemoSettings)
    assert settings.service_token.get_secret_value() == "the-stack-wide-token-0123456789"
    assert settings.nats_user == "locus"
    assert settings.nats_password_file == tmp_path / "nats-password"
    assert settings.tls_ca_file == tmp_path / "ca.crt"
    monkeypatch.setenv("LOCUS_DEMO_SERVICE_TOKEN", "this-services-own-token-987654")
    assert load_settings(DemoSettings).service_token.get_secret_value() == (
        "this-services-own-token-987654"
    )


def test_a_token_and_a_token_file_together_are_refused_without_showing_the_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCUS_SERVICE_TOKEN", "never-shown-token-0123456789")
    monkeypatch.setenv("LOCUS_SERVICE_TOKEN_FILE", str(tmp_path / "token"))
    with pytest.raises(SettingsError) as raised:
        load_settings(DemoSettings)
    shown = "".join(traceback.format_exception(raised.value))
    assert "LOCUS_DEMO_SERVICE_TOKEN_FILE" in shown
    assert "never-shown-token" not in shown


def test_a_certificate_without_its_key_or_ca_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCUS_TLS_CERT_FILE", str(tmp_path / "tls.crt"))
    with pytest.raises(SettingsError, match="TLS_KEY_FILE"):
        load_settings(DemoSettings)
    monkeypatch.setenv("LOCUS_TLS_KEY_FILE", str(tmp_path / "tls.key"))
    with pytest.raises(SettingsError, match="TLS_CA_FILE"):
        load_settings(DemoSettings)
    monkeypatch.setenv("LOCUS_TLS_CA_FILE", str(tmp_path / "ca.crt"))
    assert load_settings(DemoSettings).tls_ca_file == tmp_path / "ca.crt"


def test_the_settings_never_show_a_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_SERVICE_TOKEN", "never-shown-token-0123456789")
    monkeypatch.setenv("LOCUS_NATS_USER", "locus")
    monkeypatch.setenv("LOCUS_NATS_PASSWORD", "never-shown-password")
    settings = load_settings(DemoSettings)
    for text in (repr(settings), str(settings), str(settings.model_dump())):
        assert "never-shown-token" not in text
        assert "never-shown-password" not in text
