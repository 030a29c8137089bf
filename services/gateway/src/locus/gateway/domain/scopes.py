"""A question's scope wider than one project: the named projects, or every project of a
subsystem or of a system, and how the request log names it."""

from __future__ import annotations

from dataclasses import dataclass

from locus.gateway.domain.errors import InvalidRequest


@dataclass(frozen=True)
class ProjectScope:
    projects: tuple[str, ...] = ()  # ids or names
    subsystem: str = ""  # an id; or a name, with system
    system: str = ""  # an id or a name

    @classmethod
    def of(cls, projects: list[str], subsystem: str, system: str) -> ProjectScope:
        """The scope as given, validated: named projects, or a subsystem and/or a system."""
        named = tuple(dict.fromkeys(p.strip() for p in projects if p.strip()))
        scope = cls(named, subsystem.strip(), system.strip())
        if named and (scope.subsystem or scope.system):
            raise InvalidRequest(
                "a scope names projects, or a subsystem, or a system: not projects and more"
            )
        return scope

    @property
    def given(self) -> bool:
        return bool(self.projects or self.subsystem or self.system)

    def describe(self) -> str:
        """What the request log records as the request's project: e.g. ``system:commerce``,
        ``subsystem:commerce/orders``, ``projects:shop,billing``."""
        if self.projects:
            return "projects:" + ",".join(self.projects)
        if self.subsystem:
            where = f"{self.system}/{self.subsystem}" if self.system else self.subsystem
            return f"subsystem:{where}"
        return f"system:{self.system}"
