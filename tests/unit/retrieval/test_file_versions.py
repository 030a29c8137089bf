"""What an incoming part does to a file's indexed version."""

from __future__ import annotations

import pytest

from locus.retrieval.domain.file_versions import (
    FileState,
    PartDecision,
    PartVersion,
    apply_part,
    decide,
)

pytestmark = pytest.mark.unit


def part(
    seq: int, sha: str = "a", index: int = 0, count: int = 1, deleted: bool = False
) -> PartVersion:
    return PartVersion("f", "p", seq, sha, deleted, index, count)


def state_after(*parts: PartVersion) -> FileState | None:
    state: FileState | None = None
    for item in parts:
        state = apply_part(state, item, decide(state, item), chunks_added=2)
    return state


def test_first_sight_is_a_new_version() -> None:
    assert decide(None, part(1)) is PartDecision.NEW_VERSION


def test_newer_replaces_older_is_stale_same_is_duplicate() -> None:
    state = state_after(part(2))
    assert decide(state, part(3, "b")) is PartDecision.NEW_VERSION
    assert decide(state, part(1, "z")) is PartDecision.STALE
    assert decide(state, part(2)) is PartDecision.DUPLICATE


def test_parts_complete_in_any_order() -> None:
    state = state_after(part(1, index=2, count=3), part(1, index=0, count=3))
    assert state is not None
    assert not state.complete
    assert decide(state, part(1, index=1, count=3)) is PartDecision.SAME_VERSION
    state = state_after(
        part(1, index=2, count=3), part(1, index=0, count=3), part(1, index=1, count=3)
    )
    assert state is not None
    assert state.complete
    assert state.chunk_count == 6


def test_a_redelivered_part_adds_nothing() -> None:
    state = state_after(part(1, index=0, count=2), part(1, index=0, count=2))
    assert state is not None
    assert state.parts_done == frozenset({0})
    assert state.chunk_count == 2


def test_deletion_at_the_same_seq_is_a_new_version() -> None:
    state = state_after(part(4))
    assert decide(state, part(4, "", deleted=True)) is PartDecision.NEW_VERSION
    deleted = state_after(part(4), part(4, "", deleted=True))
    assert deleted is not None
    assert deleted.deleted
    assert deleted.complete
