"""The parts of a question that are searched alone: its title and its opening."""

from __future__ import annotations

import pytest

from locus.gateway.domain.question_parts import MAX_PART_CHARS, question_parts

pytestmark = pytest.mark.unit


def test_a_report_gives_its_first_line_and_the_first_fifth_of_its_words() -> None:
    words = " ".join(f"word{i}" for i in range(23))
    report = f"\n\n  Upload retries stop early  \n\n{words}\nmore text here"
    parts = question_parts(report)
    assert list(parts) == ["title", "opening"]
    assert parts["title"] == "Upload retries stop early"
    # 30 words: the first 6 (a fifth, rounded up)
    assert parts["opening"] == "Upload retries stop early word0 word1"


def test_a_one_line_question_is_its_own_title_and_opens_with_at_least_one_word() -> None:
    assert question_parts("where is the retry limit enforced?") == {
        "title": "where is the retry limit enforced?",
        "opening": "where is",  # 6 words: a fifth, rounded up
    }
    assert question_parts("retry limit?")["opening"] == "retry"


def test_a_blank_question_has_no_parts_and_a_pasted_payload_is_cut() -> None:
    assert question_parts(" \n\t\n") == {}
    parts = question_parts("x" * (MAX_PART_CHARS + 500))
    assert len(parts["title"]) == len(parts["opening"]) == MAX_PART_CHARS
