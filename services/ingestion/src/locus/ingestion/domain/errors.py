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
