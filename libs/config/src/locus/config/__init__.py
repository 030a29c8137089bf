"""Settings shared by every Locus service: bus, gRPC binding, data directory, peers, telemetry."""

from locus.config.settings import (
    PeerAddresses,
    ServiceSettings,
    SettingsError,
    StartupRefused,
    load_settings,
)

__all__ = ["PeerAddresses", "ServiceSettings", "SettingsError", "StartupRefused", "load_settings"]
