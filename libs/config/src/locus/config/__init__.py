"""Settings shared by every Locus service: bus, gRPC binding, data directory, peers, telemetry,
credentials."""

from locus.config.settings import (
    CredentialSettings,
    PeerAddresses,
    ServiceSettings,
    SettingsError,
    StartupRefused,
    load_settings,
)

__all__ = [
    "CredentialSettings",
    "PeerAddresses",
    "ServiceSettings",
    "SettingsError",
    "StartupRefused",
    "load_settings",
]
