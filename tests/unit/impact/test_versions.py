"""Which files.parsed events replace, extend or leave alone what impact holds for a file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from locus.impact.domain import (
    GraphRelation,
    GraphSymbol,
    HeldVersion,
    InvalidParsedFile,
    ParsedFile,
    UpdateDecision,
    check_parsed_file,
    decide_update,
    is_complete,
)

pytestmark = pytest.mark.unit

EVENT = ParsedFile(
    project_id="p1",
    job_id="j2",
    snapshot_id="s2",
    snapshot_seq=2,
    file_id="f1",
    sha256="b" * 64,
    relative_path="src/uploads/policy.py",
    language="python",
    change="modified",
    module_name="uploads.policy",
)


def held(seq: int, sha: str = "b" * 64, *, deleted: bool = False) -> HeldVersion:
    return HeldVersion("p1", seq, sha, deleted, 1, frozenset({0}))


@pytest.mark.parametrize(
    ("stored", "event", "expected"),
    [
        (None, EVENT, UpdateDecision.NEW_VERSION),
        (held(3), EVENT, UpdateDecision.STALE),
        (held(2), EVENT, UpdateDecision.SAME_VERSION),
        (held(2), replace(EVENT, part_index=1, part_count=2), UpdateDecision.SAME_VERSION),
        (held(1, "a" * 64), EVENT, UpdateDecision.NEW_VERSION),
        (held(2, "a" * 64), EVENT, UpdateDecision.NEW_VERSION),
        (held(2), replace(EVENT, change="deleted", sha256=""), UpdateDecision.NEW_VERSION),
        (held(3, "", deleted=True), EVENT, UpdateDecision.STALE),
    ],
)
def test_decide_update(
    stored: HeldVersion | None, event: ParsedFile, expected: UpdateDecision
) -> None:
    assert decide_update(stored, event) is expected


def test_a_file_is_complete_once_every_part_arrived_in_any_order() -> None:
    assert is_complete(1, frozenset({0}))
    assert is_complete(0, frozenset({0}))
    assert not is_complete(3, frozenset({0, 2}))
    assert is_complete(3, frozenset({2, 0, 1}))


SYMBOL = GraphSymbol("n1", "uploads.policy", "", "policy", "module", "f1", "p.py", 1, 9)


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (replace(EVENT, project_id=""), "project_id"),
        (replace(EVENT, file_id=""), "file_id"),
        (replace(EVENT, part_index=2, part_count=2), "outside part_count"),
        (replace(EVENT, part_index=-1), "negative"),
        (replace(EVENT, change="deleted", symbols=(SYMBOL,)), "deleted"),
        (replace(EVENT, symbols=(replace(SYMBOL, node_id=""),)), "no node_id"),
        (
            replace(
                EVENT,
                relations=(GraphRelation("calls", "", "", "x", "x", "", "f1", 3),),
            ),
            "no source",
        ),
    ],
)
def test_events_no_retry_can_fix_are_invalid(event: ParsedFile, message: str) -> None:
    with pytest.raises(InvalidParsedFile, match=message):
        check_parsed_file(event)


def test_a_plain_event_is_valid() -> None:
    check_parsed_file(replace(EVENT, symbols=(SYMBOL,)))
