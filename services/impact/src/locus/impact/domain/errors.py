"""Exceptions the impact domain raises on purpose; adapters map them to status codes or to
dead letters."""

from __future__ import annotations


class ImpactError(Exception):
    """Base class of every deliberate impact error."""


class InvalidImpactQuery(ImpactError):
    """The query cannot be answered as asked (no project, no seeds, depth out of range...)."""


class SeedsNotFound(ImpactError):
    """None of the seeds is a symbol or file of the project's current graph."""

    def __init__(self, project_id: str, node_ids: tuple[str, ...], file_ids: tuple[str, ...]):
        unknown = [*node_ids, *file_ids]
        shown = ", ".join(unknown[:5])
        if len(unknown) > 5:
            shown += f" and {len(unknown) - 5} more"
        super().__init__(
            f"none of the seeds ({shown}) is a symbol or file of project {project_id!r} as "
            "impact knows it: check the ids, or wait until the project's scan is indexed"
        )
        self.node_ids = node_ids
        self.file_ids = file_ids


class InvalidParsedFile(ImpactError):
    """A files.parsed event that can never be applied (missing ids, inconsistent parts...)."""
