"""Base pydantic-settings classes. Every service subclasses ServiceSettings with its own prefix.

Common values can be given once for the whole stack (``LOCUS_NATS_URL``) or per service
(``LOCUS_AST_NATS_URL``); the per-service variable wins. Invalid settings fail at start-up.
Credentials (the service token, mTLS files, NATS user and password) are SecretStr or file paths:
their values never reach a log line or an error message.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict
from pydantic_settings import SettingsError as SourceError

from locus.config.redaction import safe_message


class StartupRefused(RuntimeError):
    """A service cannot start as it is configured or as its store is; the message says what to
    do, and the service exits with it (status 2), without a traceback."""


class SettingsError(StartupRefused):
    """Settings are missing or invalid; the message says which variable to fix."""


class PeerAddresses(BaseSettings):
    """Where the other services listen (host:port), shared by every service and the CLI."""

    model_config = SettingsConfigDict(env_prefix="LOCUS_", extra="ignore")

    gateway_addr: str = "127.0.0.1:50050"
    ingestion_addr: str = "127.0.0.1:50051"
    ast_addr: str = "127.0.0.1:50052"
    retrieval_addr: str = "127.0.0.1:50053"
    impact_addr: str = "127.0.0.1:50054"
    answer_addr: str = "127.0.0.1:50055"


STACK_WIDE_FIELDS = (
    "nats_url",
    "subject_prefix",
    "stream_name",
    "stream_replicas",
    "log_level",
    "log_json",
    "migrate_on_start",
    "metrics_host",
    "metrics_port",
    "service_token",
    "service_token_file",
    "tls_cert_file",
    "tls_key_file",
    "tls_ca_file",
    "nats_user",
    "nats_password",
    "nats_password_file",
    "nats_tls_ca_file",
)


class CredentialSettings(BaseSettings):
    """What a process of the stack shows its peers and the bus (docs/adr/0009): the service
    token and mTLS files of internal gRPC calls, the NATS user and password. Read on its own by
    the CLI (``LOCUS_*``); every service has them through ServiceSettings."""

    model_config = SettingsConfigDict(env_prefix="LOCUS_", extra="ignore")

    # The deployment's service token: internal gRPC servers require it in the
    # x-locus-service-token header and every outbound channel sends it. Empty, and no file: the
    # internal RPCs are open (the service warns at start). The file (a mounted Secret) is read
    # at start, surrounding whitespace stripped.
    service_token: SecretStr = SecretStr("")
    service_token_file: Path | None = Field(default=None, validate_default=True)
    # mTLS between services, on when all three are set: internal servers require a client
    # certificate signed by the CA, channels present this certificate and verify the server's.
    # The certificate and key go together and need the CA; the CA alone only verifies NATS.
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    tls_ca_file: Path | None = Field(default=None, validate_default=True)
    # NATS credentials (a nats://user:password@ URL works too); the password or a file holding it.
    nats_user: str = ""
    nats_password: SecretStr = SecretStr("")
    nats_password_file: Path | None = Field(default=None, validate_default=True)
    # The CA that signed the NATS server's certificate (a tls:// server with a private CA);
    # default: tls_ca_file.
    nats_tls_ca_file: Path | None = None

    @field_validator("service_token_file")
    @classmethod
    def _one_token_source(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        token = info.data.get("service_token")
        if value is not None and isinstance(token, SecretStr) and token.get_secret_value():
            raise ValueError("give the service token or a file holding it, not both")
        return value

    @field_validator("tls_ca_file")
    @classmethod
    def _tls_files_together(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        certificate = [info.data.get("tls_cert_file"), info.data.get("tls_key_file")]
        if any(certificate) and not (all(certificate) and value):
            raise ValueError(
                "mTLS needs the certificate, its key and the CA that signs every service's "
                "certificate (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CA_FILE): set all three, or "
                "neither the certificate nor the key"
            )
        return value

    @field_validator("nats_password_file")
    @classmethod
    def _one_password_source(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        password = info.data.get("nats_password")
        if value is not None and isinstance(password, SecretStr) and password.get_secret_value():
            raise ValueError("give the NATS password or a file holding it, not both")
        return value


class ServiceSettings(CredentialSettings):
    """Settings every service has. Subclasses set ``env_prefix`` to ``LOCUS_<NAME>_``."""

    model_config = SettingsConfigDict(env_prefix="LOCUS_", extra="ignore")

    service_name: str = "locus"
    grpc_host: str = "127.0.0.1"
    grpc_port: int = Field(default=0, ge=0, le=65535)
    # Prometheus /metrics (RED of RPCs and consumers, backlogs, dead letters, ...): off unless a
    # port is set (0: any free port); the Helm chart sets 9464 on 0.0.0.0, `locus up` one each.
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = Field(default=None, ge=0, le=65535)
    nats_url: str = "nats://127.0.0.1:4222"
    subject_prefix: str = "locus.v1"
    stream_name: str = "LOCUS"
    # Replicas of the JetStream stream: 3 on a NATS cluster, 1 on the embedded server.
    stream_replicas: int = Field(default=1, ge=1, le=5)
    data_dir: Path = Path(".locus/data")
    # A PostgreSQL URL carries its password: never shown in repr, logs or errors.
    database_url: SecretStr = SecretStr("")
    # Upgrade the store's schema to the code's revision at start; off: refuse to start while it
    # is behind (`locus migrate` upgrades it).
    migrate_on_start: bool = True
    max_deliver: int = Field(default=5, ge=1, le=100)
    # How long JetStream waits for an ack before redelivering; consumers say they are still at
    # work every third of it, so it bounds how late the work of a crashed process is redone.
    ack_wait_seconds: float = Field(default=30.0, gt=0)
    rpc_timeout_seconds: float = Field(default=30.0, gt=0)
    shutdown_grace_seconds: float = Field(default=10.0, ge=0)
    log_level: str = "INFO"
    log_json: bool = False
    peers: PeerAddresses = Field(default_factory=PeerAddresses)

    @model_validator(mode="before")
    @classmethod
    def _stack_wide_defaults(cls, data: Any) -> Any:
        """Fill stack-wide values (LOCUS_NATS_URL, ...) that the service-specific ones omit."""
        if not isinstance(data, dict):
            return data
        for name in STACK_WIDE_FIELDS:
            value = os.environ.get(f"LOCUS_{name.upper()}")
            if value is not None and name not in data:
                data[name] = value
        return data

    @field_validator("nats_url")
    @classmethod
    def _nats_scheme(cls, value: str) -> str:
        if not value.startswith(("nats://", "tls://", "ws://", "wss://")):
            raise ValueError(f"must start with nats://, tls://, ws:// or wss:// (got {value!r})")
        return value

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        upper = value.upper()
        if upper not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError(f"unknown log level {value!r}")
        return upper

    def sqlalchemy_url(self, default_file: str) -> str:
        """The configured database URL, or an SQLite file under data_dir."""
        if self.database_url.get_secret_value():
            return self.database_url.get_secret_value()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite+aiosqlite:///{(self.data_dir / default_file).resolve()}"

    @property
    def grpc_bind(self) -> str:
        return f"{self.grpc_host}:{self.grpc_port}"


SettingsT = TypeVar("SettingsT", bound=BaseSettings)


def load_settings(cls: type[SettingsT], **overrides: Any) -> SettingsT:
    """Build settings from the environment (plus overrides); turn validation errors into one
    readable SettingsError naming the environment variables at fault."""
    try:
        return cls(**overrides)
    except ValidationError as exc:
        prefix = str(cls.model_config.get("env_prefix", ""))
        problems = "; ".join(
            f"{prefix}{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}"
            for err in exc.errors()
        )
        # Not chained: pydantic's own text repeats each input value (a URL with its password).
        raise SettingsError(
            f"invalid settings for {cls.__name__}: {safe_message(problems)}"
        ) from None
    except SourceError as exc:
        raise SettingsError(
            f"invalid settings for {cls.__name__}: {safe_message(str(exc))}"
        ) from None
