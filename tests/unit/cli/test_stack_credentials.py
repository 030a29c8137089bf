"""The credentials of a `locus up` stack: random secrets made once in files only their owner can
read, handed to the services as file paths (never the secrets), recorded in the state file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from locus.cli.local_stack import service_environment
from locus.cli.stack_credentials import StackCredentials
from locus.cli.stack_state import RunningProcess, StackState, read_state, write_state

pytestmark = pytest.mark.unit


def test_the_secrets_are_made_once_random_and_private(tmp_path: Path) -> None:
    made = StackCredentials.ensure(tmp_path / "data")
    token = made.service_token_file.read_text().strip()
    password = made.nats_password()
    assert len(token) >= 32
    assert len(password) >= 32
    assert token != password
    for path in (made.service_token_file, made.nats_password_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.is_absolute()
    again = StackCredentials.ensure(tmp_path / "data")
    assert again.service_token_file.read_text().strip() == token
    assert again.nats_password() == password
    other = StackCredentials.ensure(tmp_path / "other")
    assert other.service_token_file.read_text().strip() != token


def test_services_get_the_paths_never_the_secrets_and_not_the_callers_own(
    tmp_path: Path,
) -> None:
    credentials = StackCredentials.ensure(tmp_path / "data")
    inherited = {
        "PATH": "/bin",
        "LOCUS_SERVICE_TOKEN": "the-callers-own-token-0123456789",
        "LOCUS_AST_SERVICE_TOKEN_FILE": "/elsewhere/token",
        "LOCUS_NATS_PASSWORD": "the-callers-password",
        "LOCUS_TLS_CA_FILE": "/etc/locus/ca.crt",
    }
    environments = {
        name: service_environment(
            name,
            ports={"ast": 1, "gateway": 2},
            nats_url="nats://127.0.0.1:4333",
            data_dir=tmp_path / "data",
            allowed_bases=[],
            traces_file=None,
            inherited=inherited,
            credentials=credentials,
        )
        for name in ("ast", "gateway")
    }
    secrets = (credentials.service_token_file.read_text().strip(), credentials.nats_password())
    for env in environments.values():
        assert env["LOCUS_SERVICE_TOKEN_FILE"] == str(credentials.service_token_file)
        assert env["LOCUS_NATS_USER"] == "locus"
        assert env["LOCUS_NATS_PASSWORD_FILE"] == str(credentials.nats_password_file)
        assert env["LOCUS_TLS_CA_FILE"] == "/etc/locus/ca.crt"  # mTLS stays the caller's choice
        for removed in (
            "LOCUS_SERVICE_TOKEN",
            "LOCUS_AST_SERVICE_TOKEN_FILE",
            "LOCUS_NATS_PASSWORD",
        ):
            assert removed not in env
        assert not any(secret in value for secret in secrets for value in env.values())
    assert environments["gateway"]["LOCUS_GATEWAY_ADMIN_KEY_FILE"] == str(
        (tmp_path / "data" / "admin.key").resolve()
    )
    assert "LOCUS_GATEWAY_ADMIN_KEY_FILE" not in environments["ast"]


def test_the_state_records_where_the_credentials_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCUS_HOME", str(tmp_path / "home"))
    credentials = StackCredentials.ensure(tmp_path / "data")
    state = StackState(
        supervisor_pid=os.getpid(),
        data_dir=str(tmp_path / "data"),
        started_at="2025-01-01T00:00:00+00:00",
        nats=RunningProcess("nats://127.0.0.1:4222", 11, "nats.log"),
        services={"gateway": RunningProcess("127.0.0.1:50050", 12, "gateway.log")},
        service_token_file=str(credentials.service_token_file),
        nats_user=credentials.nats_user,
        nats_password_file=str(credentials.nats_password_file),
        admin_key_file=str(credentials.admin_key_file),
    )
    write_state(state)
    data = json.loads(state.state_file.read_text())
    assert data["admin_key_file"] == str((tmp_path / "data" / "admin.key").resolve())
    assert data["service_token_file"] == str(credentials.service_token_file)
    assert data["nats_user"] == "locus"
    assert read_state(state.state_file) == state
    text = state.state_file.read_text()
    assert credentials.nats_password() not in text
    assert credentials.service_token_file.read_text().strip() not in text
