"""Validation of search requests."""

from __future__ import annotations

import pytest

from locus.retrieval.domain.errors import InvalidSearch
from locus.retrieval.domain.model import SearchMode
from locus.retrieval.domain.search_request import SearchLimits, plan_search

pytestmark = pytest.mark.unit


def test_defaults() -> None:
    plan = plan_search(query="  upload  ", mode=None, project_id="p1", languages=["Python", ""])
    assert plan.query == "upload"
    assert plan.mode is SearchMode.HYBRID
    assert (plan.top_k, plan.top_k_lexical, plan.top_k_vector, plan.rrf_k) == (10, 50, 50, 60)
    assert plan.languages == ("python",)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"query": "   "}, "must not be empty"),
        ({"query": "x" * 16001}, "limit is 16000"),
        ({"project_id": ""}, "project_id is required"),
        ({"top_k": -1}, "must not be negative"),
        ({"top_k": 101}, "above the maximum 100"),
        ({"top_k_lexical": 501}, "above the maximum 500"),
        ({"rrf_k": -5}, "must not be negative"),
        ({"path_prefix": "a" * 1001}, "path_prefix is longer"),
    ],
)
def test_rejections(changes: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"query": "upload", "mode": None, "project_id": "p1"}
    arguments.update(changes)
    with pytest.raises(InvalidSearch, match=message):
        plan_search(**arguments, limits=SearchLimits())  # type: ignore[arg-type]


def test_a_query_at_the_limit_passes() -> None:
    assert len(plan_search(query="x" * 4000, mode=SearchMode.BM25, project_id="p").query) == 4000


def test_whole_file_queries_are_checked_like_the_query_and_need_a_list_length() -> None:
    plan = plan_search(
        query="upload", mode=None, project_id="p", top_whole_files=5,
        whole_file_queries=[" retry limit ", "uploads"],
    )  # fmt: skip
    assert plan.whole_file_queries == ("retry limit", "uploads")
    with pytest.raises(InvalidSearch, match="needs top_whole_files"):
        plan_search(query="upload", mode=None, project_id="p", whole_file_queries=["retry"])
    with pytest.raises(InvalidSearch, match=r"whole_file_queries\[1\] must not be empty"):
        plan_search(
            query="upload", mode=None, project_id="p", top_whole_files=5,
            whole_file_queries=["retry", ""],
        )  # fmt: skip
    with pytest.raises(InvalidSearch, match="9 whole_file_queries given; at most 8"):
        plan_search(
            query="upload", mode=None, project_id="p", top_whole_files=5,
            whole_file_queries=["retry"] * 9,
        )  # fmt: skip
