"""Which version of a file the indexes hold, and what to do with an incoming part of it.

A version is (snapshot_seq, sha256). The first part of a newer version seen (in any order)
clears the file's old chunks; later parts of that version only add chunks; a part of an older
version is stale and ignored; a part already applied is a redelivery and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum


class PartDecision(Enum):
    NEW_VERSION = "new_version"  # clear the file, then add this part's chunks
    SAME_VERSION = "same_version"  # add this part's chunks
    DUPLICATE = "duplicate"  # already applied: nothing to write
    STALE = "stale"  # an older version than the one indexed: ignore


@dataclass(frozen=True, slots=True)
class FileState:
    file_id: str
    project_id: str
    snapshot_seq: int
    sha256: str
    deleted: bool
    part_count: int
    parts_done: frozenset[int]
    chunk_count: int

    @property
    def complete(self) -> bool:
        return len(self.parts_done) >= self.part_count


@dataclass(frozen=True, slots=True)
class PartVersion:
    file_id: str
    project_id: str
    snapshot_seq: int
    sha256: str
    deleted: bool
    part_index: int
    part_count: int


def decide(state: FileState | None, part: PartVersion) -> PartDecision:
    if state is None or part.snapshot_seq > state.snapshot_seq:
        return PartDecision.NEW_VERSION
    if part.snapshot_seq < state.snapshot_seq:
        return PartDecision.STALE
    if part.sha256 != state.sha256 or part.deleted != state.deleted:
        return PartDecision.NEW_VERSION
    if part.part_index in state.parts_done:
        return PartDecision.DUPLICATE
    return PartDecision.SAME_VERSION


def apply_part(
    state: FileState | None, part: PartVersion, decision: PartDecision, chunks_added: int
) -> FileState | None:
    """The file's state after applying ``part`` with ``decision``."""
    if decision is PartDecision.NEW_VERSION:
        return FileState(
            file_id=part.file_id,
            project_id=part.project_id,
            snapshot_seq=part.snapshot_seq,
            sha256=part.sha256,
            deleted=part.deleted,
            part_count=part.part_count,
            parts_done=frozenset({part.part_index}),
            chunk_count=chunks_added,
        )
    if decision is PartDecision.SAME_VERSION and state is not None:
        return replace(
            state,
            parts_done=state.parts_done | {part.part_index},
            chunk_count=state.chunk_count + chunks_added,
        )
    return state
