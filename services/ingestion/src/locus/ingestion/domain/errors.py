"""Exceptions raised by the ingestion domain; adapters map them onto gRPC status codes."""

from __future__ import annotations


class IngestionError(Exception):
    """Base class for every error the ingestion domain raises on purpose."""


class InvalidSourceRoot(IngestionError):
    """The requested source root is malformed, missing or not a directory."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class SourceRootNotAllowed(IngestionError):
    """The requested source root resolves to a place outside every allowed base."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class PathEscapesRoot(IngestionError):
    """A path relative to a source root would point outside that root."""

    def __init__(self, relative_path: str, message: str) -> None:
        super().__init__(message)
        self.relative_path = relative_path


class InvalidRequest(IngestionError):
    """A request value is empty, too long or malformed."""


class ProjectNotFound(IngestionError):
    """No project has that id or name."""


class ProjectAlreadyExists(IngestionError):
    """A project with that name exists already."""


class SourceAlreadyExists(IngestionError):
    """That directory is already a source of the project."""


class NoSources(IngestionError):
    """The project has no source root to scan yet."""


class ScanInProgress(IngestionError):
    """Another scan of the project has not completed yet."""


class JobNotFound(IngestionError):
    """No scan job has that id."""


class ContentNotFound(IngestionError):
    """No stored file content has that sha256."""


class GitSourceUnavailable(IngestionError):
    """A git source cannot be fetched: unreachable, not a repository, or credentials refused."""


class GitRefNotFound(IngestionError):
    """The git source's ref (branch, tag or commit) does not exist in its repository."""


class CredentialUnavailable(IngestionError):
    """A git source's named credential (file or environment variable) cannot be read."""


class SystemNotFound(IngestionError):
    """No system has that id or name."""


class SubsystemNotFound(IngestionError):
    """No subsystem has that id (or that name in that system)."""


class SourceNotFound(IngestionError):
    """No source has that id."""


class RegistryNameTaken(IngestionError):
    """A system (or a subsystem of the same system) has that name already."""


class RegistryNotEmpty(IngestionError):
    """A system still has subsystems, or a subsystem still has projects."""
