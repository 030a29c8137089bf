"""Ports of the ast service layer: where file contents come from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class ContentUnavailable(Exception):
    """The content service could not answer now (down, overloaded, timed out): retry later."""


@dataclass(frozen=True)
class FetchedContents:
    texts: dict[str, str]  # sha256 → full text
    rejected: dict[str, str]  # sha256 → why it cannot be served (retrying cannot help)


class FileContentSource(Protocol):
    async def texts(self, sha256s: Sequence[str], *, final_attempt: bool) -> FetchedContents:
        """The full texts of the snapshots with these sha256 (a batch's files, fetched
        together). Raises ContentUnavailable for transient failures; a content the service
        refuses is in ``rejected``; an unexpected server error counts as transient unless
        ``final_attempt``, when every file still unfetched is rejected with it."""
        ...
