"""The extractive answer: matching locations, why they match, the lines that show it."""

from __future__ import annotations

from typing import Any

import pytest

from locus.answer.domain import (
    InsufficientContext,
    Snippet,
    compose_extractive_answer,
    gather_evidence,
    question_terms,
)

pytestmark = pytest.mark.unit


def test_question_terms_split_identifiers_drop_filler_and_share_stems() -> None:
    assert question_terms("Where is the retry limit enforced?") == ["retry", "limit", "enforc"]
    assert question_terms("how does enforceRetryLimit handle retries") == [
        "enforc",
        "retry",
        "limit",
        "handl",
    ]


def test_the_answer_names_the_best_location_cites_it_and_quotes_the_line(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    text = "".join(
        compose_extractive_answer("Where is the retry limit enforced?", uploads_snippets)
    )

    first_line = text.splitlines()[0]
    assert first_line == (
        "The best match is `enforce_retry_limit` (function) [C1] in src/uploads/policy.py:7-12"
        " — bm25: retry limit; it mentions retry, limit, enforced."
    )
    assert "> line 12: `return max(1, min(attempts, RETRY_LIMIT))` [C1]" in text
    assert "Related: `UploadClient.upload` (method) [C2] in src/uploads/client.py:42-51" in text
    assert "calls enforce_retry_limit" in text
    assert "> line 51: `return self._retry(path, enforce_retry_limit(attempts))` [C2]" in text
    assert "without a language model" in text


def test_snippets_rank_by_question_words_then_retrieval_score(snippet: Any) -> None:
    vague = snippet("C1", "policy.py", 15, 16, "uploads.policy.backoff_for", "function", 0.99)
    exact = snippet(
        "C2", "policy.py", 7, 12, "uploads.policy.enforce_retry_limit", "function", 0.30
    )

    evidence = gather_evidence("retry limit", (vague, exact))

    assert [e.snippet.citation_id for e in evidence] == ["C2"]
    assert evidence[0].in_name == ("retry", "limit")


def test_question_words_no_snippet_mentions_are_said_so(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    text = "".join(compose_extractive_answer("retry limit for quotas", uploads_snippets))

    assert "No retrieved snippet mentions quotas." in text


def test_no_overlap_with_the_question_fails_closed(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    with pytest.raises(InsufficientContext, match="none of the retrieved snippets mentions"):
        compose_extractive_answer("How are thumbnails rendered?", uploads_snippets)


def test_a_question_without_content_words_fails_closed(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    with pytest.raises(InsufficientContext, match="no words to look for"):
        compose_extractive_answer("How does it work?", uploads_snippets)
