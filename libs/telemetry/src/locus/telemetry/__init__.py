"""OpenTelemetry for Locus: tracer provider setup, request IDs in baggage, correlated logs."""

from locus.config.redaction import redact, safe_message
from locus.telemetry.correlated_logging import configure_logging
from locus.telemetry.request_id import (
    REQUEST_ID_ATTRIBUTE,
    REQUEST_ID_BAGGAGE_KEY,
    REQUEST_ID_HEADER,
    current_request_id,
    new_request_id,
    with_request_id,
)
from locus.telemetry.setup import Telemetry, setup_telemetry

__all__ = [
    "REQUEST_ID_ATTRIBUTE",
    "REQUEST_ID_BAGGAGE_KEY",
    "REQUEST_ID_HEADER",
    "Telemetry",
    "configure_logging",
    "current_request_id",
    "new_request_id",
    "redact",
    "safe_message",
    "setup_telemetry",
    "with_request_id",
]
