"""Validation helpers: questions, counts with defaults and limits, path prefixes, ids, ratings."""

from __future__ import annotations

import pytest

from locus.gateway.domain.errors import InvalidRequest
from locus.gateway.domain.validation import (
    MAX_QUESTION_CHARS,
    bounded_count,
    normalize_path_prefix,
    page_size,
    require_id,
    validate_comment,
    validate_question,
    validate_rating,
)

pytestmark = pytest.mark.unit


def test_a_question_is_stripped() -> None:
    assert validate_question("  where are orders placed?\n") == "where are orders placed?"


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_refused(question: str) -> None:
    with pytest.raises(InvalidRequest, match="must not be empty"):
        validate_question(question)


def test_the_question_length_limit() -> None:
    assert validate_question("q" * MAX_QUESTION_CHARS) == "q" * MAX_QUESTION_CHARS
    with pytest.raises(InvalidRequest, match="250001 characters long; the limit is 250000"):
        validate_question("q" * (MAX_QUESTION_CHARS + 1))


def test_a_page_size_is_capped_not_refused() -> None:
    assert page_size(0, default=50, limit=500) == 50
    assert page_size(7, default=50, limit=500) == 7
    assert page_size(100_000, default=50, limit=500) == 500
    with pytest.raises(InvalidRequest, match=r"page\.page_size must not be negative"):
        page_size(-1, default=50, limit=500)


def test_counts_default_and_limit() -> None:
    assert bounded_count("max_files", 0, default=10, limit=100) == 10
    assert bounded_count("max_files", 7, default=10, limit=100) == 7
    assert bounded_count("max_files", 100, default=10, limit=100) == 100
    with pytest.raises(InvalidRequest, match="max_files must be at most 100"):
        bounded_count("max_files", 101, default=10, limit=100)
    with pytest.raises(InvalidRequest, match="max_files must not be negative"):
        bounded_count("max_files", -1, default=10, limit=100)


@pytest.mark.parametrize(
    ("prefix", "normalized"),
    [
        ("", ""),
        ("src/shop", "src/shop"),
        ("./src/shop/", "src/shop/"),
        ("/src", "src"),
        ("src\\shop", "src/shop"),
        ("  tests ", "tests"),
        ("a..b/c", "a..b/c"),
    ],
)
def test_path_prefixes_are_normalized(prefix: str, normalized: str) -> None:
    assert normalize_path_prefix(prefix) == normalized


@pytest.mark.parametrize("prefix", ["../etc", "src/../../etc", "x" * 1001])
def test_escaping_or_huge_path_prefixes_are_refused(prefix: str) -> None:
    with pytest.raises(InvalidRequest):
        normalize_path_prefix(prefix)


def test_ids() -> None:
    assert require_id("request_id", " abc ") == "abc"
    with pytest.raises(InvalidRequest, match="request_id must not be empty"):
        require_id("request_id", "")
    with pytest.raises(InvalidRequest, match="longer than 200"):
        require_id("request_id", "r" * 201)


@pytest.mark.parametrize("rating", [1, 3, 5])
def test_ratings_in_range(rating: int) -> None:
    assert validate_rating(rating) == rating


@pytest.mark.parametrize("rating", [0, 6, -1])
def test_ratings_out_of_range(rating: int) -> None:
    with pytest.raises(InvalidRequest, match="rating must be between 1 and 5"):
        validate_rating(rating)


def test_comment_limit() -> None:
    assert validate_comment("c" * 4000) == "c" * 4000
    with pytest.raises(InvalidRequest, match="the limit is 4000"):
        validate_comment("c" * 4001)
