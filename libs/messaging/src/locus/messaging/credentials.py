"""Credentials of a connection to NATS (docs/adr/0009): a user and password (or a file holding
the password), and the CA of a NATS server with a private certificate (used only when the
server asks for TLS). Read once from the settings; the password reaches only nats-py's CONNECT,
never a log line or an error message."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faststream.nats.security import NatsSecurity, NatsUserPassword

from locus.config import CredentialSettings, SettingsError

AUTHORIZATION_HINT = (
    "set LOCUS_NATS_USER and LOCUS_NATS_PASSWORD (or LOCUS_NATS_PASSWORD_FILE) to a user the NATS "
    "server knows; `locus up` keeps its own in <data dir>/nats-password"
)


@dataclass(frozen=True)
class BusCredentials:
    """Empty (the default): connect anonymously, or with the URL's user-info."""

    user: str = ""
    password: str = field(default="", repr=False)
    tls_ca_file: Path | None = None

    @classmethod
    def from_settings(cls, settings: CredentialSettings) -> BusCredentials:
        password = settings.nats_password.get_secret_value()
        if settings.nats_password_file is not None:
            try:
                password = settings.nats_password_file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as error:
                raise SettingsError(
                    f"cannot read LOCUS_NATS_PASSWORD_FILE {settings.nats_password_file}: "
                    f"{getattr(error, 'strerror', None) or type(error).__name__}"
                ) from None
        if password and not settings.nats_user:
            raise SettingsError("LOCUS_NATS_PASSWORD is set but LOCUS_NATS_USER is not: set both")
        ca_file = settings.nats_tls_ca_file or settings.tls_ca_file
        if ca_file is not None and not ca_file.is_file():
            raise SettingsError(
                f"LOCUS_NATS_TLS_CA_FILE (default LOCUS_TLS_CA_FILE) {ca_file} is not a file"
            )
        return cls(settings.nats_user, password, ca_file)

    def _ssl_context(self) -> ssl.SSLContext | None:
        if self.tls_ca_file is None:
            return None
        return ssl.create_default_context(cafile=str(self.tls_ca_file))

    def connect_options(self) -> dict[str, Any]:
        """Keyword arguments of ``nats.connect`` (none for anonymous connections)."""
        options: dict[str, Any] = {}
        if self.user:
            options |= {"user": self.user, "password": self.password}
        context = self._ssl_context()
        if context is not None:
            options["tls"] = context
        return options

    def security(self) -> NatsSecurity | None:
        """The same, as FastStream's ``NatsBroker(security=...)``."""
        context = self._ssl_context()
        if self.user:
            return NatsUserPassword(self.user, self.password, ssl_context=context)
        if context is not None:
            return NatsSecurity(ssl_context=context)
        return None
