"""Service layer of access: who is calling (an API key or an OIDC token from the call's
``authorization: Bearer …`` metadata), whether that principal may act on a project, API key
administration, the bootstrap admin key of a deployment, and the audit of every refusal."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol, TypeVar

import grpc

from locus.config import StartupRefused
from locus.gateway.domain.access import (
    EVERY_PROJECT,
    AccessDenied,
    Grant,
    NotAuthenticated,
    Principal,
    Role,
    denied_everywhere,
    denied_on_owner,
    denied_on_project,
)
from locus.gateway.domain.api_keys import (
    KEY_PREFIX,
    MAX_GRANTS,
    MAX_KEY_NAME_CHARS,
    MAX_KEY_OWNER_CHARS,
    ApiKey,
    hash_secret,
    new_credential,
    parse_api_key,
    secret_matches,
)
from locus.gateway.domain.errors import InvalidRequest
from locus.gateway.domain.ports import ApiKeyStore, AuditTrail, TokenVerifier
from locus.rpc import ServiceError
from locus.telemetry import current_request_id, safe_message

Found = TypeVar("Found")
log = logging.getLogger(__name__)

AUTHORIZATION_HEADER = "authorization"
BOOTSTRAP_CREATOR = "bootstrap"
MAX_KEY_LIFETIME = timedelta(days=3650)


@dataclass(frozen=True)
class ProjectIdentity:
    project_id: str
    name: str


class ProjectDirectory(Protocol):
    """Finds a project by id or name (None when there is none)."""

    async def find(self, project_ref: str) -> ProjectIdentity | None: ...


class AccessControl:
    def __init__(
        self,
        keys: ApiKeyStore,
        projects: ProjectDirectory,
        audit: AuditTrail,
        *,
        tokens: TokenVerifier | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._keys = keys
        self._projects = projects
        self._audit = audit
        self._tokens = tokens
        self._now = clock

    # who is calling

    async def authenticate(self, metadata: Mapping[str, str]) -> Principal:
        """The principal the call's credential names; NotAuthenticated when there is none or
        it is not valid. Checked on every call: a revoked key stops working at once."""
        header = metadata.get(AUTHORIZATION_HEADER, "").strip()
        if not header:
            raise NotAuthenticated(
                "no credential: send the metadata 'authorization: Bearer <API key or token>' "
                "(`locus keys create` makes a key; `locus up` writes a local admin key and the "
                "CLI uses it)"
            )
        scheme, _, credential = header.partition(" ")
        credential = credential.strip()
        if scheme.lower() != "bearer" or not credential:
            raise NotAuthenticated("the authorization metadata must be 'Bearer <API key or token>'")
        parsed = parse_api_key(credential)
        if parsed is not None:
            return await self._key_principal(*parsed)
        if credential.startswith(KEY_PREFIX):
            raise NotAuthenticated(
                "the API key is malformed (expected lk_<12 hex>_<43 characters>): copy it whole"
            )
        if self._tokens is None:
            raise NotAuthenticated(
                "the credential is not an API key (lk_…) and this gateway accepts no OIDC "
                "tokens (LOCUS_GATEWAY_OIDC_ISSUER is not set)"
            )
        return await self._tokens.principal(credential)

    async def _key_principal(self, key_id: str, secret: str) -> Principal:
        found = await self._keys.key(key_id)
        if found is None or not secret_matches(secret, found[1]):
            raise NotAuthenticated(f"API key {key_id} is not valid")
        key, _ = found
        now = self._now()
        if key.revoked_at is not None and key.revoked_at <= now:
            raise NotAuthenticated(f"API key {key_id} was revoked")
        if key.expires_at is not None and key.expires_at <= now:
            raise NotAuthenticated(
                f"API key {key_id} expired at {key.expires_at.isoformat(timespec='seconds')}"
            )
        return key.principal()

    # what it may do

    async def require_project(
        self,
        principal: Principal,
        role: Role,
        project_ref: str,
        *,
        method: str,
        shown_as: str = "",
    ) -> ProjectIdentity | None:
        """Pass when ``principal`` holds ``role`` on the project named by ``project_ref``
        (an id or a name). The project is returned when it had to be looked up (None for a
        principal with that role everywhere). AccessDenied otherwise (audited), with the same
        message for a project that does not exist: a caller learns nothing of projects it may
        not see. ``shown_as`` names the project in that message when the caller did not name
        it (e.g. "the project of scan job …")."""
        if principal.may_everywhere(role):
            return None
        reference = project_ref.strip()
        project = await self._projects.find(reference) if reference else None
        if project is None or not principal.may(role, project.project_id, project.name):
            error = (
                denied_on_owner(principal, role, shown_as)
                if shown_as
                else denied_on_project(principal, role, reference or "(none)")
            )
            await self.refused(principal, method, error)
            raise error
        return project

    async def require_owner(
        self,
        principal: Principal,
        role: Role,
        lookup: Callable[[], Awaitable[Found]],
        project_of: Callable[[Found], str],
        *,
        method: str,
        shown_as: str,
    ) -> Found:
        """Look an object up (a scan job, a node, a source) and pass when ``principal`` holds
        ``role`` on its project. A caller without the role everywhere is refused with the same
        message whether the object does not exist or belongs to a project it may not see, so
        ids cannot be probed; a caller with it everywhere learns NOT_FOUND as before."""
        try:
            found = await lookup()
        except ServiceError as error:
            if error.code != grpc.StatusCode.NOT_FOUND or principal.may_everywhere(role):
                raise
            denial = denied_on_owner(principal, role, shown_as)
            await self.refused(principal, method, denial)
            raise denial from None
        await self.require_project(
            principal, role, project_of(found), method=method, shown_as=shown_as
        )
        return found

    async def require_everywhere(
        self, principal: Principal, role: Role, what: str, *, method: str
    ) -> None:
        if not principal.may_everywhere(role):
            error = denied_everywhere(principal, role, what)
            await self.refused(principal, method, error)
            raise error

    async def refused(self, principal: Principal | None, method: str, error: Exception) -> None:
        """Log and audit a refused call (never fails the caller's answer)."""
        code = "PERMISSION_DENIED" if isinstance(error, AccessDenied) else "UNAUTHENTICATED"
        scope = error.scope if isinstance(error, AccessDenied) else ""
        subject = principal.subject if principal is not None else ""
        log.warning(
            "refused %s for %s (%s, scope %r): %s",
            method,
            subject or "an unauthenticated caller",
            code,
            scope,
            error,
        )
        with contextlib.suppress(Exception):
            await self._audit.access_denied(
                current_request_id() or "", subject, method, scope, code, safe_message(str(error))
            )

    # API keys

    async def create_key(
        self,
        principal: Principal,
        *,
        name: str,
        owner: str,
        grants: Sequence[Grant],
        expires_in: timedelta | None,
        method: str = "CreateApiKey",
    ) -> tuple[ApiKey, str]:
        """A new key and its credential (shown once). A principal grants at most what it
        holds: only a system admin grants on every project, a project's admin on that
        project."""
        name = name.strip()
        if not name or len(name) > MAX_KEY_NAME_CHARS:
            raise InvalidRequest(f"name must be 1 to {MAX_KEY_NAME_CHARS} characters")
        if len(owner) > MAX_KEY_OWNER_CHARS:
            raise InvalidRequest(f"owner must be at most {MAX_KEY_OWNER_CHARS} characters")
        if not grants:
            raise InvalidRequest("a key needs at least one grant (e.g. reader:shop)")
        if len(grants) > MAX_GRANTS:
            raise InvalidRequest(f"a key may carry at most {MAX_GRANTS} grants")
        if expires_in is not None and not timedelta(0) < expires_in <= MAX_KEY_LIFETIME:
            raise InvalidRequest("expires_in_seconds must be positive and at most ten years")
        stored: list[Grant] = []
        for grant in grants:
            if grant.system_wide:
                if not principal.may_grant(grant):
                    error = denied_everywhere(principal, Role.ADMIN, f"granting {grant}")
                    await self.refused(principal, method, error)
                    raise error
                stored.append(grant)
                continue
            project = await self._projects.find(grant.project)
            if project is None or not principal.may_grant(grant, project.project_id, project.name):
                error = denied_on_project(principal, Role.ADMIN, grant.project)
                await self.refused(principal, method, error)
                raise error
            stored.append(Grant(project.project_id, grant.role))  # ids survive renames
        now = self._now()
        key = ApiKey(
            key_id="",
            name=name,
            owner=owner.strip() or principal.name,
            grants=tuple(dict.fromkeys(stored)),
            created_at=now,
            created_by=principal.subject,
            expires_at=now + expires_in if expires_in is not None else None,
        )
        while True:  # 48-bit ids: a clash is rare, and then a new id is drawn
            credential = new_credential()
            key = replace(key, key_id=credential.key_id)
            if await self._keys.add_key(key, credential.secret_hash):
                log.info("API key %s (%s) created by %s", key.key_id, name, principal.subject)
                return key, credential.api_key

    async def list_keys(self, principal: Principal, *, include_revoked: bool) -> list[ApiKey]:
        """Every key for a system admin; the keys it created for anyone else."""
        created_by = "" if principal.is_system_admin else principal.subject
        return await self._keys.keys(created_by=created_by, include_revoked=include_revoked)

    async def revoke_key(
        self, principal: Principal, key_id: str, *, method: str = "RevokeApiKey"
    ) -> ApiKey:
        """Revoke a key: a system admin any key, anyone else the keys it created (or its own).
        It stops working on the next call."""
        key_id = key_id.strip().removeprefix("key:")
        found = await self._keys.key(key_id) if key_id else None
        if found is None or not (
            principal.is_system_admin
            or found[0].created_by == principal.subject
            or found[0].subject == principal.subject
        ):
            error = AccessDenied(
                f"{principal.subject} may not revoke key {key_id!r}: only its creator, the key "
                "itself or a system admin (admin:*) may",
                scope=f"key:{key_id}",
            )
            await self.refused(principal, method, error)
            raise error
        revoked = await self._keys.revoke_key(key_id, self._now())
        assert revoked is not None
        log.info("API key %s revoked by %s", key_id, principal.subject)
        return revoked

    async def ensure_bootstrap_key(self, path: Path) -> str:
        """The deployment's admin key at ``path``: registered when the file holds one (a
        Kubernetes Secret, or the key a previous start wrote), else created and written
        there, readable by this user only. Returns the key id."""
        credential = await asyncio.to_thread(_read_if_present, path)
        if credential is not None:
            parsed = parse_api_key(credential)
            if parsed is None:
                raise StartupRefused(
                    f"{path} does not hold an API key (lk_<12 hex>_<43 characters>); delete it "
                    "to have the gateway write a new admin key there, or put a valid key in it"
                )
            key_id, secret = parsed
            found = await self._keys.key(key_id)
            if found is not None:
                if not secret_matches(secret, found[1]):
                    raise StartupRefused(
                        f"the admin key in {path} has id {key_id}, which names another key in "
                        "this gateway's store; generate a new key for the file"
                    )
                if found[0].revoked_at is not None:
                    log.warning("the admin key %s in %s is revoked", key_id, path)
                return key_id
            await self._keys.add_key(self._bootstrap_key(key_id), hash_secret(secret))
            log.info("registered the admin key %s from %s", key_id, path)
            return key_id
        credential_made = new_credential()
        await self._keys.add_key(
            self._bootstrap_key(credential_made.key_id), credential_made.secret_hash
        )
        await asyncio.to_thread(_write_private, path, credential_made.api_key + "\n")
        log.info("created the admin key %s in %s", credential_made.key_id, path)
        return credential_made.key_id

    def _bootstrap_key(self, key_id: str) -> ApiKey:
        return ApiKey(
            key_id=key_id,
            name="admin (bootstrap)",
            owner="the deployment",
            grants=(Grant(EVERY_PROJECT, Role.ADMIN),),
            created_at=self._now(),
            created_by=BOOTSTRAP_CREATOR,
        )


def _read_if_present(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to a new file only this user may read (its directory made 0700)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)


class BootstrapAdminKey:
    """A start-up component: the deployment's admin key registered (or written) before the
    gateway serves."""

    def __init__(self, access: AccessControl, path: Path) -> None:
        self._access = access
        self._path = path

    async def start(self) -> None:
        await self._access.ensure_bootstrap_key(self._path)

    async def stop(self) -> None:
        return None
