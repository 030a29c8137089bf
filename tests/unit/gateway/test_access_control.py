"""Access control on a real SQLite key store: grants and roles, API key authentication (revoked,
expired, forged), what a principal may grant, and the deployment's bootstrap admin key file."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from locus.config import StartupRefused
from locus.database import Database
from locus.gateway.access_control import AccessControl, ProjectIdentity
from locus.gateway.adapters.sql_api_key_store import SqlApiKeyStore
from locus.gateway.domain.access import (
    AccessDenied,
    Grant,
    NotAuthenticated,
    Principal,
    Role,
)
from locus.gateway.domain.api_keys import parse_api_key

SHOP = ProjectIdentity("p-shop", "shop")
BILLING = ProjectIdentity("p-billing", "billing")


@dataclass
class Directory:
    projects: list[ProjectIdentity] = field(default_factory=lambda: [SHOP, BILLING])

    async def find(self, project_ref: str) -> ProjectIdentity | None:
        return next((p for p in self.projects if project_ref in (p.project_id, p.name)), None)


@dataclass
class Audit:
    denied: list[tuple[str, str, str, str]] = field(default_factory=list)

    async def access_denied(
        self, request_id: str, principal: str, method: str, scope: str, code: str, reason: str
    ) -> None:
        self.denied.append((principal, method, scope, code))


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime(2026, 11, 27, 12, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Access:
    control: AccessControl
    keys: SqlApiKeyStore
    audit: Audit
    clock: Clock
    tmp_path: Path


@pytest.fixture
async def access(tmp_path: Path) -> AsyncIterator[Access]:
    keys = SqlApiKeyStore(Database(f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}"))
    await keys.initialize()
    audit, clock = Audit(), Clock()
    control = AccessControl(keys, Directory(), audit, clock=clock)  # type: ignore[arg-type]
    try:
        yield Access(control, keys, audit, clock, tmp_path)
    finally:
        await keys.close()


def bearer(credential: str) -> dict[str, str]:
    return {"authorization": f"Bearer {credential}"}


def test_grants_parse_and_roles_are_ordered() -> None:
    assert Grant.parse(" writer:shop ") == Grant("shop", Role.WRITER)
    assert Grant.parse("admin:*").system_wide
    for bad in ("shop", "reader:", "owner:shop"):
        with pytest.raises(ValueError, match=r"grant|role"):
            Grant.parse(bad)
    principal = Principal("key:x", "x", (Grant("shop", Role.WRITER), Grant("*", Role.READER)))
    assert principal.role_on("p-shop", "shop") == Role.WRITER
    assert principal.role_on("p-other", "other") == Role.READER
    assert principal.may(Role.READER, "p-shop", "shop")
    assert not principal.may(Role.ADMIN, "p-shop", "shop")
    assert principal.may_everywhere(Role.READER)
    assert not principal.may_everywhere(Role.WRITER)


async def test_a_key_authenticates_until_it_is_revoked_or_expires(access: Access) -> None:
    admin = Principal("key:root", "root", (Grant("*", Role.ADMIN),))
    key, credential = await access.control.create_key(
        admin,
        name="ci",
        owner="",
        grants=[Grant("shop", Role.READER)],
        expires_in=timedelta(hours=1),
    )
    principal = await access.control.authenticate(bearer(credential))
    assert principal.subject == f"key:{key.key_id}"
    assert principal.grants == (Grant("p-shop", Role.READER),)  # stored by id
    assert key.owner == "root"  # the creator's name when no owner is given

    access.clock.now += timedelta(hours=1)
    with pytest.raises(NotAuthenticated, match="expired"):
        await access.control.authenticate(bearer(credential))

    other, other_credential = await access.control.create_key(
        admin, name="bot", owner="ops", grants=[Grant("*", Role.READER)], expires_in=None
    )
    await access.control.revoke_key(admin, other.key_id)
    with pytest.raises(NotAuthenticated, match="revoked"):
        await access.control.authenticate(bearer(other_credential))

    key_id, _secret = parse_api_key(other_credential) or ("", "")
    forged = f"lk_{key_id}_{'A' * 43}"
    for metadata in ({}, {"authorization": "Basic abc"}, bearer(forged), bearer("lk_short")):
        with pytest.raises(NotAuthenticated):
            await access.control.authenticate(metadata)
    with pytest.raises(NotAuthenticated, match="OIDC"):
        await access.control.authenticate(bearer("eyJhbGciOiJSUzI1NiJ9.e30.sig"))


async def test_a_principal_grants_no_more_than_it_holds(access: Access) -> None:
    shop_admin = Principal("key:shop-admin", "shop admin", (Grant("p-shop", Role.ADMIN),))
    made, _ = await access.control.create_key(
        shop_admin, name="dev", owner="", grants=[Grant("shop", Role.WRITER)], expires_in=None
    )
    assert made.grants == (Grant("p-shop", Role.WRITER),)
    for grant in (
        Grant("billing", Role.READER),
        Grant("*", Role.READER),
        Grant("nope", Role.READER),
    ):
        with pytest.raises(AccessDenied):
            await access.control.create_key(
                shop_admin, name="wider", owner="", grants=[grant], expires_in=None
            )
    assert [d[1] for d in access.audit.denied] == ["CreateApiKey"] * 3
    # The same refusal for a project that exists and one that does not.
    messages = []
    for project in ("billing", "nope"):
        with pytest.raises(AccessDenied) as denied:
            await access.control.require_project(shop_admin, Role.READER, project, method="Locate")
        messages.append(str(denied.value).replace(project, "X"))
    assert messages[0] == messages[1]
    # Keys are listed for their creator; revoked by their creator or a system admin only.
    assert [
        k.key_id for k in await access.control.list_keys(shop_admin, include_revoked=False)
    ] == [made.key_id]
    stranger = Principal("key:stranger", "s", (Grant("p-shop", Role.READER),))
    with pytest.raises(AccessDenied):
        await access.control.revoke_key(stranger, made.key_id)
    with pytest.raises(AccessDenied):
        await access.control.revoke_key(stranger, "000000000000")


async def test_the_bootstrap_admin_key_is_written_once_and_registered_from_its_file(
    access: Access, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "admin.key"
    key_id = await access.control.ensure_bootstrap_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    credential = path.read_text().strip()
    principal = await access.control.authenticate(bearer(credential))
    assert principal.subject == f"key:{key_id}"
    assert principal.is_system_admin
    # A second start keeps the same key; a fresh store registers the key the file holds.
    assert await access.control.ensure_bootstrap_key(path) == key_id
    fresh = SqlApiKeyStore(Database(f"sqlite+aiosqlite:///{tmp_path / 'other.db'}"))
    await fresh.initialize()
    try:
        other = AccessControl(fresh, Directory(), Audit())  # type: ignore[arg-type]
        assert await other.ensure_bootstrap_key(path) == key_id
        assert (await other.authenticate(bearer(credential))).is_system_admin
    finally:
        await fresh.close()

    broken = tmp_path / "broken.key"
    broken.write_text("not a key\n")
    with pytest.raises(StartupRefused, match="does not hold an API key"):
        await access.control.ensure_bootstrap_key(broken)
    clash = tmp_path / "clash.key"
    clash.write_text(f"lk_{key_id}_{'B' * 43}\n")
    with pytest.raises(StartupRefused, match="names another key"):
        await access.control.ensure_bootstrap_key(clash)
