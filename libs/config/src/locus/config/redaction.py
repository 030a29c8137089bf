"""Credentials and unbounded input never leave a process in a message: URLs lose their
user-info (``nats://user:secret@host`` → ``nats://***@host``), query parameters that carry a
secret lose their value, and a message is cut to a length a person can read and a gRPC trailer
can carry. Used for every gRPC error message and every log line."""

from __future__ import annotations

import logging
import re

# scheme://user[:password]@ — the user-info of any URL (NATS, PostgreSQL, HTTP endpoints).
_USER_INFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@'\"]+@")
# ?token=…, &api_key=…, password=… in URLs and settings text.
_SECRET_PARAMETER = re.compile(
    r"(?P<name>\b(?:api[_-]?key|access[_-]?token|token|password|passwd|secret|auth)=)[^&\s'\"]+",
    re.IGNORECASE,
)
# Authorization: Bearer …
_BEARER = re.compile(r"(?P<name>\bbearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)

# UTF-8 bytes. gRPC percent-encodes a status message into a trailer (soft limit 8 KiB): 2,000
# bytes stay under it even when every byte is escaped as %XX.
MAX_MESSAGE_BYTES = 2000


def redact(text: str) -> str:
    """``text`` without the credentials it may carry."""
    text = _USER_INFO.sub(r"\g<scheme>***@", text)
    text = _SECRET_PARAMETER.sub(r"\g<name>***", text)
    return _BEARER.sub(r"\g<name>***", text)


def bounded(text: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes (whole characters), saying how much was left out."""
    encoded = text.encode("utf-8", errors="replace")
    if len(encoded) <= limit:
        return text
    kept = encoded[:limit].decode("utf-8", errors="ignore")
    return f"{kept}… ({len(text) - len(kept)} more characters not shown)"


def safe_message(text: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """What may go into an error status or a stored record: redacted and bounded."""
    return bounded(redact(text), limit)


class RedactingFilter(logging.Filter):
    """Rewrites each record's message (arguments merged) without credentials."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            formatted = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(formatted)
        return True
