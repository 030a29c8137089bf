"""Who may do what: principals (an API key or an OIDC token's subject), their grants (a role on
a project, or on every project), and the role each public call needs. Pure logic: the
credentials are checked in ``locus.gateway.authentication``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum

from locus.gateway.domain.errors import GatewayError

EVERY_PROJECT = "*"


class Role(IntEnum):
    """Ordered: a writer may do what a reader may, an admin what a writer may."""

    READER = 1  # locate, ask, search, read symbols, projects and scans
    WRITER = 2  # + add sources, start scans
    ADMIN = 3  # + create projects (system-wide), manage keys

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Role:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            choices = ", ".join(r.label for r in cls)
            raise ValueError(f"unknown role {text!r}; roles: {choices}") from None


@dataclass(frozen=True)
class Grant:
    project: str  # a project's id or name, or EVERY_PROJECT
    role: Role

    @property
    def system_wide(self) -> bool:
        return self.project == EVERY_PROJECT

    def covers(self, project_id: str, project_name: str) -> bool:
        return self.system_wide or self.project in (project_id, project_name)

    def __str__(self) -> str:
        return f"{self.role.label}:{self.project}"

    @classmethod
    def parse(cls, text: str) -> Grant:
        """``reader:shop``, ``admin:*`` (role, a colon, a project's id or name or ``*``)."""
        role, separator, project = text.strip().partition(":")
        if not separator or not project.strip():
            raise ValueError(
                f"grant {text!r} is not ROLE:PROJECT (e.g. reader:shop, writer:shop, admin:*)"
            )
        return cls(project.strip(), Role.parse(role))


@dataclass(frozen=True)
class Principal:
    """An authenticated caller. ``subject`` is what the request log and audit events record:
    ``key:<key id>`` for an API key, ``oidc:<subject>`` for a token."""

    subject: str
    name: str
    grants: tuple[Grant, ...]
    expires_at: datetime | None = None

    def role_on(self, project_id: str, project_name: str = "") -> Role | None:
        """The highest role a grant gives on this project; None when no grant covers it."""
        roles = [g.role for g in self.grants if g.covers(project_id, project_name)]
        return max(roles) if roles else None

    @property
    def system_role(self) -> Role | None:
        """The role on every project; None when every grant names projects."""
        roles = [g.role for g in self.grants if g.system_wide]
        return max(roles) if roles else None

    def may_everywhere(self, role: Role) -> bool:
        system = self.system_role
        return system is not None and system >= role

    def may(self, role: Role, project_id: str, project_name: str = "") -> bool:
        held = self.role_on(project_id, project_name)
        return held is not None and held >= role

    @property
    def is_system_admin(self) -> bool:
        return self.may_everywhere(Role.ADMIN)

    def may_grant(self, grant: Grant, project_id: str = "", project_name: str = "") -> bool:
        """Whether this principal may hand ``grant`` to a new key: never more than it holds
        (only a system admin grants on every project; a project's admin on that project)."""
        if self.is_system_admin:
            return True
        if grant.system_wide:
            return False
        return self.may(Role.ADMIN, project_id, project_name)


class AccessDenied(GatewayError):
    """The principal lacks the role a call needs. The message names what is missing and is
    the same whether or not the project exists, so it tells nothing of projects the caller
    may not see."""

    def __init__(self, message: str, *, scope: str) -> None:
        super().__init__(message)
        self.scope = scope


class NotAuthenticated(GatewayError):
    """No credential, or one that is not valid (unknown, revoked, expired, bad signature)."""


def denied_on_project(principal: Principal, role: Role, project_ref: str) -> AccessDenied:
    return AccessDenied(
        f"{principal.subject} has no {role.label} role on project {project_ref!r}; "
        f"ask an admin for a key or token granting {role.label}:{project_ref}",
        scope=project_ref,
    )


def denied_on_owner(principal: Principal, role: Role, described: str) -> AccessDenied:
    """Refused on the project an object belongs to (``described``: "the project of node …"),
    which the caller did not name and may not learn: the same words whether the object
    exists or not."""
    return AccessDenied(
        f"{principal.subject} has no {role.label} role on {described} (or there is no such "
        f"object); ask an admin for a key or token granting {role.label} on that project "
        f"({role.label}:<project id or name>)",
        scope=described,
    )


def denied_everywhere(principal: Principal, role: Role, what: str) -> AccessDenied:
    return AccessDenied(
        f"{what} needs the {role.label} role on every project ({role.label}:*), "
        f"which {principal.subject} does not have",
        scope=EVERY_PROJECT,
    )
