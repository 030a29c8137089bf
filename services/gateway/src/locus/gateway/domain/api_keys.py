"""API keys: ``lk_<key id>_<secret>``. The key id is public (it names the caller in the request
log); the secret is 256 random bits, shown once at creation and stored only as its SHA-256 (a
secret this long needs no slow hash: nothing can guess it, and a stolen table cannot be
reversed)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from locus.gateway.domain.access import Grant, Principal

KEY_PREFIX = "lk_"
_KEY = re.compile(r"^lk_(?P<key_id>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{43})$")
MAX_KEY_NAME_CHARS = 100
MAX_KEY_OWNER_CHARS = 200
MAX_GRANTS = 100


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    name: str
    owner: str
    grants: tuple[Grant, ...]
    created_at: datetime
    created_by: str
    expires_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def subject(self) -> str:
        return f"key:{self.key_id}"

    def usable_at(self, moment: datetime) -> bool:
        if self.revoked_at is not None and self.revoked_at <= moment:
            return False
        return self.expires_at is None or moment < self.expires_at

    def principal(self) -> Principal:
        return Principal(self.subject, self.name, self.grants, self.expires_at)


@dataclass(frozen=True)
class NewKeyCredential:
    key_id: str
    secret_hash: str
    api_key: str  # the whole credential: only the caller ever sees it


def new_credential() -> NewKeyCredential:
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return NewKeyCredential(key_id, hash_secret(secret), f"{KEY_PREFIX}{key_id}_{secret}")


def parse_api_key(text: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key; None for anything else."""
    match = _KEY.match(text.strip())
    if match is None:
        return None
    return match["key_id"], match["secret"]


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)
