"""Citations in generated text, checked against the snippets that were shown."""

from __future__ import annotations

import pytest

from locus.answer.domain import Snippet, check_citations, cited_ids

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Enforced in `enforce_retry_limit` [C1], called by upload [C2].", ["C1", "C2"]),
        ("See [C2][C1] and again [C2].", ["C2", "C1"]),
        ("Both [C1, C3] and [c2; C4].", ["C1", "C3", "C2", "C4"]),
        ("Leading zeros [C01] normalise.", ["C1"]),
        ("No brackets C1, other brackets [1] [see C2] [Cx].", []),
        ("", []),
    ],
)
def test_cited_ids(text: str, expected: list[str]) -> None:
    assert cited_ids(text) == expected


def test_only_shown_snippets_are_valid_citations(uploads_snippets: tuple[Snippet, ...]) -> None:
    check = check_citations("x [C2] y [C9] z [C1] [C2]", uploads_snippets[:2])

    assert [s.citation_id for s in check.valid] == ["C2", "C1"]
    assert check.unknown == ("C9",)
    assert not check.grounded


def test_an_answer_without_citations_is_not_grounded(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    check = check_citations("The retry limit is three.", uploads_snippets)

    assert (check.valid, check.unknown, check.grounded) == ((), (), False)


def test_citing_only_shown_snippets_is_grounded(uploads_snippets: tuple[Snippet, ...]) -> None:
    assert check_citations("In [C3].", uploads_snippets).grounded
