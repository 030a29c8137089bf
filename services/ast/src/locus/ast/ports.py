"""Ports of the ast service layer: where file contents come from."""

from __future__ import annotations

from typing import Protocol


class ContentUnavailable(Exception):
    """The content service could not answer now (down, overloaded, timed out): retry later."""


class ContentRejected(Exception):
    """The content service answered that this content cannot be served (unknown hash, invalid
    request): retrying the same request cannot help."""


class FileContentSource(Protocol):
    async def text(self, sha256: str, *, final_attempt: bool) -> str:
        """The full text of the snapshot with this sha256. Raises ContentUnavailable for
        transient failures, ContentRejected for permanent ones; an unexpected server error
        counts as transient unless ``final_attempt``."""
        ...
