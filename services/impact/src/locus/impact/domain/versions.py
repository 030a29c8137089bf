"""Which files.parsed events change what impact holds for a file.

Every file keeps the version (snapshot_seq, sha256, deleted) it was last built from, and the
parts of that version received so far. An event of an older snapshot is stale and ignored; an
event of another version replaces everything of the file; a part of the held version replaces
only that part's rows, so a redelivered part changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from locus.impact.domain.errors import InvalidParsedFile
from locus.impact.domain.model import ParsedFile


class UpdateDecision(Enum):
    STALE = "stale"
    SAME_VERSION = "same_version"
    NEW_VERSION = "new_version"


@dataclass(frozen=True, slots=True)
class HeldVersion:
    project_id: str
    snapshot_seq: int
    sha256: str
    deleted: bool
    part_count: int
    parts_done: frozenset[int]


def decide_update(held: HeldVersion | None, event: ParsedFile) -> UpdateDecision:
    if held is None:
        return UpdateDecision.NEW_VERSION
    if event.snapshot_seq < held.snapshot_seq:
        return UpdateDecision.STALE
    same = (
        event.snapshot_seq == held.snapshot_seq
        and event.sha256 == held.sha256
        and event.deleted == held.deleted
    )
    return UpdateDecision.SAME_VERSION if same else UpdateDecision.NEW_VERSION


def is_complete(part_count: int, parts_done: frozenset[int]) -> bool:
    return all(part in parts_done for part in range(max(part_count, 1)))


def check_parsed_file(event: ParsedFile) -> None:
    """Raise InvalidParsedFile for an event that no retry can make valid."""
    if not event.project_id:
        raise InvalidParsedFile("files.parsed has no project_id")
    if not event.file_id:
        raise InvalidParsedFile("files.parsed has no file.file_id")
    if event.part_count < 0 or event.part_index < 0:
        raise InvalidParsedFile(
            f"part {event.part_index} of {event.part_count} of {event.file_id} is negative"
        )
    if event.part_index >= max(event.part_count, 1):
        raise InvalidParsedFile(
            f"part_index {event.part_index} is outside part_count {event.part_count} "
            f"for file {event.file_id}"
        )
    if event.deleted and (event.symbols or event.relations or event.dependencies):
        raise InvalidParsedFile(f"deleted file {event.file_id} still carries symbols")
    for symbol in event.symbols:
        if not symbol.node_id or not symbol.qualified_name:
            raise InvalidParsedFile(
                f"a symbol of {event.file_id} has no node_id or qualified_name"
                f" ({symbol.qualified_name or symbol.node_id or 'both empty'})"
            )
    for relation in event.relations:
        if not relation.source_node_id and not relation.source_qualified_name:
            raise InvalidParsedFile(f"a {relation.kind} relation of {event.file_id} has no source")
