"""Which files of a files.changed batch the ast service stores in one transaction."""

from __future__ import annotations

import pytest

from locus.ast.indexing import group_end

pytestmark = pytest.mark.unit


def test_a_group_takes_every_ready_file_after_the_first_in_order() -> None:
    ids = ["a", "b", "c", "d"]
    assert group_end(ids, [True, True, True, True], 0, 64) == 4
    assert group_end(ids, [True, True, False, True], 0, 64) == 2  # c not parsed yet: stop there
    assert group_end(ids, [True, False, True, True], 2, 64) == 4


def test_a_group_never_holds_one_file_twice_and_stays_under_the_limit() -> None:
    ids = ["a", "b", "a", "c"]  # the same file twice in one batch: two transactions, in order
    assert group_end(ids, [True] * 4, 0, 64) == 2
    assert group_end(ids, [True] * 4, 2, 64) == 4
    assert group_end(["a", "b", "c"], [True] * 3, 0, 2) == 2
