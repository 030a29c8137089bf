"""Value objects of the ingestion domain: scanned and skipped files, skip reasons, file changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class SkipReason(StrEnum):
    """Why a file under the source root is not indexed."""

    OVERSIZE = "oversize"
    BINARY = "binary"
    UNDECODABLE = "undecodable"
    GENERATED = "generated"
    SYMLINK_ESCAPES = "symlink_escapes"
    UNREADABLE = "unreadable"
    SECRET = "secret"  # a credentials file: never read into any index or store


class ChangeType(StrEnum):
    """How a file differs between two snapshots of a source root."""

    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class SkipDecision:
    """A skip reason together with a sentence a person can act on."""

    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """A file that will be indexed; `relative_path` is POSIX-style and relative to the root."""

    relative_path: str
    sha256: str
    size_bytes: int
    language: str | None
    data: bytes = field(repr=False)
    # False: not read this time; unchanged since a read the walk's ``ReadCache`` remembers
    # (sha256 and language are that read's; ``data`` is empty).
    content_read: bool = True


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file (or unlistable directory) under the root that will not be indexed, and why."""

    relative_path: str
    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's difference between two snapshots; a sha256 is None where the file is absent."""

    path: str
    change_type: ChangeType
    old_sha256: str | None
    new_sha256: str | None
