"""The TokenVerifier for OIDC access tokens (JWTs): the signature is checked against the issuer's
JWKS (fetched from its discovery document or a configured URL, cached, fetched again for a key id
it does not know, so the issuer can rotate keys), and ``iss``, ``aud`` and ``exp`` are enforced.
Only the configured asymmetric algorithms are accepted: ``alg: none`` and HMAC never are. The
token's groups (or roles) claim maps onto grants by configuration."""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import jwt

from locus.gateway.domain.access import Grant, NotAuthenticated, Principal

log = logging.getLogger(__name__)

ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


class OidcTokenVerifier:
    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_url: str = "",
        algorithms: Sequence[str] = ("RS256", "ES256"),
        groups_claim: str = "groups",
        role_mapping: Mapping[str, Sequence[str]] | None = None,
        jwks_cache_seconds: int = 300,
        jwks_refetch_cooldown_seconds: float = 30.0,
        leeway_seconds: int = 30,
        timeout_seconds: float = 5.0,
    ) -> None:
        unsupported = sorted(set(algorithms) - ASYMMETRIC_ALGORITHMS)
        if unsupported or not algorithms:
            raise ValueError(
                f"OIDC algorithms must be asymmetric ({', '.join(sorted(ASYMMETRIC_ALGORITHMS))})"
                f"; refused: {', '.join(unsupported) or '(none given)'}"
            )
        self._issuer = issuer
        self._audience = audience
        self._jwks_url = jwks_url
        self._algorithms = list(algorithms)
        self._groups_claim = groups_claim
        self._mapping = {
            group: tuple(Grant.parse(g) for g in grants)
            for group, grants in (role_mapping or {}).items()
        }
        self._cache_seconds = jwks_cache_seconds
        # An unknown key id fetches the keys again at most once per cooldown, so tokens with
        # made-up key ids cannot make the gateway hammer the issuer.
        self._refetch_cooldown = jwks_refetch_cooldown_seconds
        self._leeway = leeway_seconds
        self._timeout = timeout_seconds
        self._client: jwt.PyJWKClient | None = None
        self._lock = asyncio.Lock()

    async def principal(self, token: str) -> Principal:
        client = await self._jwks_client()
        try:
            claims = await asyncio.to_thread(self._decode, client, token)
        except jwt.PyJWKClientConnectionError as error:
            log.warning("cannot fetch the issuer's signing keys: %s", error)
            raise NotAuthenticated(
                "the token cannot be checked now: the issuer's signing keys are unreachable"
            ) from None
        except (jwt.PyJWTError, ValueError) as error:
            raise NotAuthenticated(f"the token is not valid: {_reason(error)}") from None
        subject = str(claims.get("sub") or "")
        if not subject:
            raise NotAuthenticated("the token is not valid: it has no 'sub' claim")
        grants: dict[Grant, None] = {}
        for group in _groups(claims, self._groups_claim):
            for grant in self._mapping.get(group, ()):
                grants[grant] = None
        name = str(
            claims.get("email") or claims.get("preferred_username") or claims.get("name") or ""
        )
        expires = claims.get("exp")
        return Principal(
            subject=f"oidc:{subject}",
            name=name or subject,
            grants=tuple(grants),
            expires_at=datetime.fromtimestamp(expires, UTC) if expires else None,
        )

    def _decode(self, client: jwt.PyJWKClient, token: str) -> dict[str, Any]:
        header = jwt.get_unverified_header(token)
        if header.get("alg") not in self._algorithms:
            raise jwt.InvalidAlgorithmError(
                f"algorithm {header.get('alg')!r} is not accepted "
                f"(accepted: {', '.join(self._algorithms)})"
            )
        signing_key = client.get_signing_key_from_jwt(token)
        claims: dict[str, Any] = jwt.decode(
            token,
            signing_key.key,
            algorithms=self._algorithms,
            audience=self._audience,
            issuer=self._issuer,
            leeway=self._leeway,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
        return claims

    async def _jwks_client(self) -> jwt.PyJWKClient:
        async with self._lock:
            if self._client is None:
                url = self._jwks_url or await asyncio.to_thread(self._discover)
                self._client = jwt.PyJWKClient(
                    url,
                    cache_keys=True,
                    lifespan=self._cache_seconds,
                    timeout=int(self._timeout),
                    cooldown_duration=self._refetch_cooldown,
                )
            return self._client

    def _discover(self) -> str:
        """The ``jwks_uri`` of the issuer's OpenID discovery document."""
        url = self._issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            with urllib.request.urlopen(url, timeout=self._timeout) as response:
                document = json.loads(response.read())
            return str(document["jwks_uri"])
        except (OSError, ValueError, KeyError) as error:
            log.warning("OIDC discovery at %s failed: %s", url, error)
            raise NotAuthenticated(
                "the token cannot be checked now: the issuer's discovery document is "
                "unreachable (or set LOCUS_GATEWAY_OIDC_JWKS_URL)"
            ) from None


def _groups(claims: Mapping[str, Any], claim: str) -> list[str]:
    """The token's groups: ``claim`` may be a dotted path (``realm_access.roles``) to a list
    or to a space-separated string."""
    value: Any = claims
    for part in claim.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def _reason(error: Exception) -> str:
    if isinstance(error, jwt.ExpiredSignatureError):
        return "it has expired"
    if isinstance(error, jwt.InvalidAudienceError):
        return "it is not meant for this gateway (audience)"
    if isinstance(error, jwt.InvalidIssuerError):
        return "it is from another issuer"
    if isinstance(error, jwt.InvalidSignatureError):
        return "its signature does not verify"
    if isinstance(error, jwt.InvalidAlgorithmError):
        return str(error)
    if isinstance(error, jwt.MissingRequiredClaimError):
        return str(error)
    if isinstance(error, jwt.PyJWKClientError):
        return "it is signed with a key the issuer does not publish"
    return "it cannot be decoded"
