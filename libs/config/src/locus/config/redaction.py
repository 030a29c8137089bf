"""Credentials and unbounded input never leave a process in a message: URLs lose their
user-info (``nats://user:secret@host`` → ``nats://***@host``), query parameters that carry a
secret lose their value, bearer credentials, Locus API keys (all but their public key id) and
JWTs are masked, and a message is cut to a length a person can read and a gRPC trailer can
carry. Used for every gRPC error message, every log line and the gateway's request journal."""

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
# The deployment's service token (docs/adr/0009) however it is printed: a header
# "x-locus-service-token: …", a setting "LOCUS_SERVICE_TOKEN=…", a metadata pair
# ('x-locus-service-token', '…'). A *_FILE setting names a path and is kept.
_SERVICE_TOKEN = re.compile(
    r"(?P<name>(?:x-locus-service-token|service[_-]token)(?:\s*[:=]\s*|['\"]\s*,\s*)['\"]?)"
    r"[^\s'\"&,)]+",
    re.IGNORECASE,
)
# A Locus API key, lk_<12 hex key id>_<secret>: the key id is public and stays. Any length of
# secret, so a key cut short or run into other text is masked too.
_API_KEY = re.compile(r"(?<![A-Za-z0-9])(?P<key_id>lk_[0-9a-f]{12}_)[A-Za-z0-9_-]+")
# A JWT (an OIDC token): three base64url segments, the header's always starting {" = eyJ.
# The signature may be empty (alg "none").
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")

# UTF-8 bytes. gRPC percent-encodes a status message into a trailer (soft limit 8 KiB): 2,000
# bytes stay under it even when every byte is escaped as %XX.
MAX_MESSAGE_BYTES = 2000


def redact(text: str) -> str:
    """``text`` without the credentials it may carry."""
    text = _USER_INFO.sub(r"\g<scheme>***@", text)
    text = _SECRET_PARAMETER.sub(r"\g<name>***", text)
    text = _BEARER.sub(r"\g<name>***", text)
    text = _SERVICE_TOKEN.sub(r"\g<name>***", text)
    text = _API_KEY.sub(r"\g<key_id>***", text)
    return _JWT.sub("***", text)


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
