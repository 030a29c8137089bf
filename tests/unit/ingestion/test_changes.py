from __future__ import annotations

import pytest

from locus.ingestion.domain.changes import batched, compute_changes
from locus.ingestion.domain.model import ChangeType, FileChange

pytestmark = pytest.mark.unit


def test_reports_added_modified_and_deleted_files_sorted_by_path() -> None:
    previous = {"src/b.py": "b1", "src/c.py": "c1", "README.md": "r1"}
    current = {"src/a.py": "a1", "src/b.py": "b2", "README.md": "r1"}

    assert compute_changes(previous, current) == [
        FileChange("src/a.py", ChangeType.ADDED, None, "a1"),
        FileChange("src/b.py", ChangeType.MODIFIED, "b1", "b2"),
        FileChange("src/c.py", ChangeType.DELETED, "c1", None),
    ]


def test_unchanged_snapshots_produce_no_changes() -> None:
    snapshot = {"a.py": "1", "b/c.py": "2"}

    assert compute_changes(snapshot, dict(snapshot)) == []
    assert compute_changes({}, {}) == []


def test_a_first_snapshot_is_all_additions() -> None:
    changes = compute_changes({}, {"z.py": "2", "a.py": "1"})

    assert [(c.path, c.change_type) for c in changes] == [
        ("a.py", ChangeType.ADDED),
        ("z.py", ChangeType.ADDED),
    ]


def test_batched_splits_into_consecutive_lists_of_at_most_size() -> None:
    assert list(batched(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []
    assert list(batched(iter("ab"), 2)) == [["a", "b"]]


@pytest.mark.parametrize("size", [0, -1])
def test_batched_refuses_a_size_below_one(size: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        list(batched([1], size))
