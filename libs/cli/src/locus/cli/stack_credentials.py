"""The credentials of a ``locus up`` stack (docs/adr/0009): a random service token and NATS
password made on its first start and kept in its data dir (files only their owner can read), the
environment that hands them to every service, and the credentials the CLI's own commands use to
reach the stack's internal services and its bus."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from locus.cli.exit_codes import CliError, ExitCode
from locus.config import CredentialSettings, SettingsError, load_settings
from locus.messaging import BusCredentials
from locus.rpc import MeshCredentials

SERVICE_TOKEN_FILE_NAME = "service-token"
NATS_PASSWORD_FILE_NAME = "nats-password"
ADMIN_KEY_FILE_NAME = "admin.key"  # written by the gateway itself (its local admin API key)
NATS_USER = "locus"
# Variables locus up sets itself: the caller's own values would contradict the stack's files.
_REPLACED_SUFFIXES = (
    "SERVICE_TOKEN",
    "SERVICE_TOKEN_FILE",
    "NATS_USER",
    "NATS_PASSWORD",
    "NATS_PASSWORD_FILE",
    "ADMIN_KEY_FILE",
)


def _ensure_secret_file(path: Path) -> None:
    """A file holding a fresh random secret unless it holds one already; 0600 either way."""
    if path.exists() and path.read_text(encoding="utf-8").strip():
        path.chmod(0o600)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_urlsafe(32) + "\n")


@dataclass(frozen=True)
class StackCredentials:
    """Where a stack's secrets live (absolute paths); never the secrets themselves."""

    service_token_file: Path
    nats_user: str
    nats_password_file: Path
    admin_key_file: Path

    @classmethod
    def ensure(cls, data_dir: Path) -> StackCredentials:
        """The stack's credentials in ``data_dir``, made on its first start and kept after
        (services restarted by hand against the same data dir still match)."""
        data_dir = data_dir.resolve()
        found = cls(
            service_token_file=data_dir / SERVICE_TOKEN_FILE_NAME,
            nats_user=NATS_USER,
            nats_password_file=data_dir / NATS_PASSWORD_FILE_NAME,
            admin_key_file=data_dir / ADMIN_KEY_FILE_NAME,
        )
        _ensure_secret_file(found.service_token_file)
        _ensure_secret_file(found.nats_password_file)
        return found

    def nats_password(self) -> str:
        return self.nats_password_file.read_text(encoding="utf-8").strip()

    def service_environment(self, name: str, inherited: Mapping[str, str]) -> dict[str, str]:
        """``inherited`` without any credential variable of its own, plus the stack's: file
        paths and the NATS user, never a secret itself."""
        env = {
            key: value
            for key, value in inherited.items()
            if not (key.startswith("LOCUS_") and key.endswith(_REPLACED_SUFFIXES))
        }
        env |= {
            "LOCUS_SERVICE_TOKEN_FILE": str(self.service_token_file),
            "LOCUS_NATS_USER": self.nats_user,
            "LOCUS_NATS_PASSWORD_FILE": str(self.nats_password_file),
        }
        if name == "gateway":
            env["LOCUS_GATEWAY_ADMIN_KEY_FILE"] = str(self.admin_key_file)
        return env


def _environment_settings() -> CredentialSettings:
    try:
        return load_settings(CredentialSettings)
    except SettingsError as error:
        raise CliError(str(error), ExitCode.USAGE) from None


def mesh_credentials(service_token_file: str | Path | None) -> MeshCredentials:
    """What the CLI's calls to a stack's services carry: the token in ``service_token_file``
    (a stack's; else ``LOCUS_SERVICE_TOKEN[_FILE]``) and, with ``LOCUS_TLS_*`` set, the mesh
    certificate."""
    settings = _environment_settings()
    if service_token_file:
        settings = settings.model_copy(
            update={"service_token": SecretStr(""), "service_token_file": Path(service_token_file)}
        )
    try:
        return MeshCredentials.from_settings(settings)
    except SettingsError as error:
        raise CliError(str(error), ExitCode.UNAVAILABLE) from None


def bus_credentials(nats_user: str, nats_password_file: str | Path | None) -> BusCredentials:
    """What the CLI's connections to a stack's NATS present: that user with the password in
    ``nats_password_file`` (a stack's; else ``LOCUS_NATS_USER`` and
    ``LOCUS_NATS_PASSWORD[_FILE]``)."""
    settings = _environment_settings()
    if nats_password_file:
        settings = settings.model_copy(
            update={
                "nats_user": nats_user,
                "nats_password": SecretStr(""),
                "nats_password_file": Path(nats_password_file),
            }
        )
    try:
        return BusCredentials.from_settings(settings)
    except SettingsError as error:
        raise CliError(str(error), ExitCode.UNAVAILABLE) from None
