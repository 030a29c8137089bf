"""Request checks before any generation."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from locus.answer.domain import (
    AnswerRequest,
    InvalidAnswerRequest,
    RequestLimits,
    Snippet,
    validate_request,
)

pytestmark = pytest.mark.unit


@pytest.fixture
def request_(uploads_snippets: tuple[Snippet, ...]) -> AnswerRequest:
    return AnswerRequest("r1", "Where is the retry limit enforced?", uploads_snippets)


def test_a_plain_request_is_valid(request_: AnswerRequest) -> None:
    validate_request(request_, RequestLimits())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": ""}, "question is empty"),
        ({"question": " \n\t"}, "question is empty"),
        ({"question": "x" * 16001}, "16001 characters long; the limit is 16000"),
        ({"max_tokens": -1}, "max_tokens must not be negative"),
        ({"max_tokens": 5000}, "above the limit"),
        ({"min_relevance": -0.1}, "min_relevance"),
        ({"min_relevance": float("nan")}, "min_relevance"),
    ],
)
def test_bad_requests_are_refused(
    request_: AnswerRequest, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidAnswerRequest, match=message):
        validate_request(replace(request_, **change), RequestLimits())


def test_duplicate_citation_ids_are_refused(request_: AnswerRequest) -> None:
    first = request_.snippets[0]
    duplicate = replace(request_.snippets[1], citation_id=first.citation_id)

    with pytest.raises(InvalidAnswerRequest, match="C1 is used by more than one"):
        validate_request(replace(request_, snippets=(first, duplicate)), RequestLimits())


@pytest.mark.parametrize("citation_id", ["", "1", "C", "C0", "c1", "C1 ", "[C1]"])
def test_citation_ids_must_look_like_c_and_a_number(
    request_: AnswerRequest, citation_id: str
) -> None:
    odd = replace(request_.snippets[0], citation_id=citation_id)

    with pytest.raises(InvalidAnswerRequest, match="use C1, C2"):
        validate_request(replace(request_, snippets=(odd,)), RequestLimits())


def test_too_many_snippets_are_refused(request_: AnswerRequest) -> None:
    with pytest.raises(InvalidAnswerRequest, match="3 context snippets given; the limit is 2"):
        validate_request(request_, RequestLimits(max_snippets=2))
