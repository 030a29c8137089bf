"""Ports of impact's service layer: what it needs from the outside, named for what it does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from locus.impact.domain.model import FileReport


class IndexReporter(Protocol):
    """Tells the rest of the system which files of a scan job the graph holds, skipped or
    could not apply (one report per job; a repeated report must be harmless)."""

    async def report(self, reports: Sequence[FileReport]) -> None: ...
