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


def test_snippets_that_mention_no_question_word_are_left_out(snippet: Any) -> None:
    vague = snippet("C1", "policy.py", 15, 16, "uploads.policy.backoff_for", "function", 0.99)
    exact = snippet(
        "C2", "policy.py", 7, 12, "uploads.policy.enforce_retry_limit", "function", 0.30
    )

    evidence = gather_evidence("retry limit", (vague, exact))

    assert [e.snippet.citation_id for e in evidence] == ["C2"]
    assert evidence[0].in_name == ("retry", "limit")


def test_the_best_match_is_locates_and_quotes_show_the_rarest_words(snippet: Any) -> None:
    # psf/requests: "requests" is in every snippet and tells nothing; Locate ranked
    # resolve_redirects first, so the answer leads with it, quoting the limit's check, not the
    # parameter line that only says "request".
    resolve = snippet(
        "C1",
        "sessions.py",
        180,
        184,
        "requests.sessions.SessionRedirectMixin.resolve_redirects",
        "method",
        0.9,
        text="    def resolve_redirects(\n        self,\n        req: PreparedRequest,\n"
        "    ):\n        if len(resp.history) >= self.max_redirects:",
    )
    init = snippet(
        "C2",
        "sessions.py",
        390,
        392,
        "requests.sessions.Session.__init__",
        "method",
        0.4,
        text="    def __init__(self):\n        #: Maximum number of redirects allowed, the"
        " requests limit\n        self.max_redirects = DEFAULT_REDIRECT_LIMIT",
    )

    prepare = snippet(
        "C3",
        "models.py",
        300,
        301,
        "requests.models.PreparedRequest.prepare",
        "method",
        0.2,
        text="    def prepare(self):\n        self.prepare_method(requests_method)",
    )

    text = "".join(
        compose_extractive_answer(
            "how does requests limit the number of redirects?", (resolve, init, prepare)
        )
    )

    assert text.startswith("The best match is `SessionRedirectMixin.resolve_redirects`")
    assert "> line 184: `if len(resp.history) >= self.max_redirects:` [C1]" in text
    assert "req: PreparedRequest" not in text


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
