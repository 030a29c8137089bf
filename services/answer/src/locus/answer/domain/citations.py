"""Citations in a generated answer, checked against the snippets the generator was shown:
only those are grounded; an id that is not among them was made up."""

from __future__ import annotations

import re
from dataclasses import dataclass

from locus.answer.domain.model import Snippet

# [C1], [C1, C2], [C1; C3], [c2] (models vary in case and separators)
_BRACKETED = re.compile(r"\[\s*([Cc]\d+(?:\s*[,;]\s*[Cc]\d+)*)\s*\]")
_ID = re.compile(r"[Cc](\d+)")


def cited_ids(text: str) -> list[str]:
    """Citation ids in order of first appearance, normalised to ``C<n>``."""
    found: dict[str, None] = {}
    for group in _BRACKETED.finditer(text):
        for number in _ID.findall(group.group(1)):
            found.setdefault(f"C{int(number)}", None)
    return list(found)


@dataclass(frozen=True, slots=True)
class CitationCheck:
    valid: tuple[Snippet, ...]  # cited and shown, in order of first citation
    unknown: tuple[str, ...]  # cited but never shown to the generator

    @property
    def grounded(self) -> bool:
        return bool(self.valid) and not self.unknown


def check_citations(text: str, shown: tuple[Snippet, ...]) -> CitationCheck:
    by_id = {s.citation_id: s for s in shown}
    ids = cited_ids(text)
    return CitationCheck(
        valid=tuple(by_id[i] for i in ids if i in by_id),
        unknown=tuple(i for i in ids if i not in by_id),
    )
