"""Credentials of internal gRPC calls (docs/adr/0009): the deployment's service token, sent by
every channel in ``x-locus-service-token`` and required by every internal server, and optional
mTLS between services. Read once from the settings at start; the token never leaves this
module except in the header of an outbound call."""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from locus.config import CredentialSettings, SettingsError

SERVICE_TOKEN_HEADER = "x-locus-service-token"
MIN_TOKEN_CHARACTERS = 16
# A gRPC metadata value: printable ASCII; no spaces, so a token pasted with a line break or a
# trailing space is refused at start instead of failing every call.
_TOKEN = re.compile(r"[\x21-\x7e]+")
GENERATE_HINT = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


@dataclass(frozen=True)
class TlsMaterial:
    """PEM bytes: this process's certificate chain and key, and the CA that signed its peers'."""

    certificate_chain: bytes
    private_key: bytes = field(repr=False)
    root_certificates: bytes

    @classmethod
    def from_files(cls, cert_file: Path, key_file: Path, ca_file: Path) -> TlsMaterial:
        return cls(
            _read(cert_file, "LOCUS_TLS_CERT_FILE"),
            _read(key_file, "LOCUS_TLS_KEY_FILE"),
            _read(ca_file, "LOCUS_TLS_CA_FILE"),
        )

    def server_credentials(self, *, require_client_certificates: bool) -> grpc.ServerCredentials:
        """Serve TLS; with ``require_client_certificates``, only to clients whose certificate
        the CA signed (the handshake fails for any other)."""
        return grpc.ssl_server_credentials(
            [(self.private_key, self.certificate_chain)],
            root_certificates=self.root_certificates if require_client_certificates else None,
            require_client_auth=require_client_certificates,
        )

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """Verify the server against the CA and present this process's certificate."""
        return grpc.ssl_channel_credentials(
            root_certificates=self.root_certificates,
            private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )


class MeshCredentials:
    """What an internal call carries and an internal server requires. Its repr and str never
    show the token."""

    def __init__(self, token: str = "", tls: TlsMaterial | None = None) -> None:
        self._token = token.encode("ascii")
        self.tls = tls

    @classmethod
    def from_settings(cls, settings: CredentialSettings) -> MeshCredentials:
        """The credentials the settings name, files read now; SettingsError (the service exits
        with its message) for a file that cannot be read or a token that is not usable."""
        token = settings.service_token.get_secret_value()
        source = "LOCUS_SERVICE_TOKEN"
        if settings.service_token_file is not None:
            token = _read(settings.service_token_file, "LOCUS_SERVICE_TOKEN_FILE").decode(
                "utf-8", errors="replace"
            )
            source = f"the file {settings.service_token_file} (LOCUS_SERVICE_TOKEN_FILE)"
            if not token.strip():
                raise SettingsError(f"the service token in {source} is empty")
        token = token.strip()
        if token and (len(token) < MIN_TOKEN_CHARACTERS or not _TOKEN.fullmatch(token)):
            raise SettingsError(
                f"the service token from {source} must be at least {MIN_TOKEN_CHARACTERS} "
                f"printable ASCII characters without spaces; make one with {GENERATE_HINT}"
            )
        tls = None
        if settings.tls_cert_file and settings.tls_key_file and settings.tls_ca_file:
            tls = TlsMaterial.from_files(
                settings.tls_cert_file, settings.tls_key_file, settings.tls_ca_file
            )
        return cls(token, tls)

    @property
    def has_token(self) -> bool:
        return bool(self._token)

    @property
    def is_open(self) -> bool:
        """No token and no mTLS: an internal server with these credentials accepts anyone."""
        return not self._token and self.tls is None

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The header an outbound call carries (none without a token)."""
        return ((SERVICE_TOKEN_HEADER, self._token.decode("ascii")),) if self._token else ()

    def accepts(self, presented: str | bytes | None) -> bool:
        """Whether a call presenting ``presented`` may pass (always, without a token).
        Constant-time: how much of a guess matched does not show in the time taken."""
        if not self._token:
            return True
        if presented is None:
            return False
        given = (
            presented.encode("utf-8", errors="replace") if isinstance(presented, str) else presented
        )
        return hmac.compare_digest(given, self._token)

    def without_token(self) -> MeshCredentials:
        """The same TLS material, no token: for a public peer (the gateway) that must not
        receive the deployment's token."""
        return MeshCredentials("", self.tls)

    def __repr__(self) -> str:
        token = "set" if self._token else "none"
        return f"MeshCredentials(token={token}, tls={'on' if self.tls else 'off'})"

    __str__ = __repr__


def _read(path: Path, setting: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise SettingsError(
            f"cannot read {setting} {path}: {error.strerror or type(error).__name__}"
        ) from None
