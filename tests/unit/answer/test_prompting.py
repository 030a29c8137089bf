"""Prompt building: numbered, line-numbered snippets within a token budget."""

from __future__ import annotations

from typing import Any

import pytest

from locus.answer.domain import PromptBudget, Snippet, build_prompt, estimate_tokens, render_snippet
from locus.answer.domain.prompting import MIN_SNIPPET_TOKENS, SYSTEM_INSTRUCTION, user_message

pytestmark = pytest.mark.unit


def test_a_snippet_is_shown_with_its_id_location_symbol_reason_and_numbered_lines(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    rendered = render_snippet(uploads_snippets[0]).splitlines()

    assert rendered[:3] == [
        "[C1] src/uploads/policy.py:7-12",
        "symbol: uploads.policy.enforce_retry_limit (function)",
        "why: bm25: retry limit",
    ]
    assert rendered[3] == " 7 | def enforce_retry_limit(attempts: int) -> int:"
    assert rendered[-1] == "12 |     return max(1, min(attempts, RETRY_LIMIT))"


def test_an_outline_whose_lines_are_not_the_source_range_is_not_numbered(snippet: Any) -> None:
    outline = snippet(
        "C4",
        "client.py",
        23,
        61,
        "uploads.client.UploadClient",
        "class",
        text="class UploadClient:\n    def upload(self, path): ...",
    )

    rendered = render_snippet(outline).splitlines()

    assert rendered[0] == "[C4] src/uploads/client.py:23-61"
    assert "  | class UploadClient:" in rendered


def test_the_prompt_instructs_to_answer_only_from_snippets_and_cite_them(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    prompt = build_prompt(
        "r1", " Where is the retry limit enforced? ", uploads_snippets, 256, PromptBudget()
    )

    system, user = prompt.input.messages
    assert system.role == "system"
    assert "only the numbered code snippets" in system.content
    assert "[C1]" in system.content
    assert user.content.index("[C1] src/uploads/policy.py:7-12") < user.content.index("[C2]")
    assert user.content.rstrip().endswith("citing them as [C1], [C2], ...")
    assert "Question: Where is the retry limit enforced?" in user.content
    assert prompt.input.snippets == uploads_snippets
    assert (prompt.dropped, prompt.truncated) == ((), ())
    assert prompt.input.prompt_tokens == sum(estimate_tokens(m.content) for m in (system, user))


def test_lowest_scored_snippets_are_dropped_first_and_the_rest_keep_citation_order(
    snippet: Any,
) -> None:
    body = "\n".join(f"value_{i} = compute_{i}(value_{i - 1})" for i in range(12))
    low = snippet("C1", "client.py", 1, 12, score=0.1, text=body)
    high = snippet("C2", "client.py", 13, 24, score=0.9, text=body)
    middle = snippet("C3", "client.py", 25, 36, score=0.5, text=body)
    question = "what is computed?"
    one = estimate_tokens(render_snippet(high)) + 1
    fixed = estimate_tokens(SYSTEM_INSTRUCTION) + estimate_tokens(user_message(question, []))
    room_for_two_and_a_bit = 2 * one + MIN_SNIPPET_TOKENS - 1
    budget = PromptBudget(context_window_tokens=fixed + 100 + 64 + room_for_two_and_a_bit)

    prompt = build_prompt("r1", question, (low, high, middle), 100, budget)

    assert [s.citation_id for s in prompt.input.snippets] == ["C2", "C3"]
    assert prompt.dropped == ("C1",)


def test_a_long_snippet_is_truncated_to_whole_lines_with_a_note(snippet: Any) -> None:
    body = "\n".join(f"    step_{i} = handle(step_{i - 1})  # keep going" for i in range(400))
    huge = snippet("C1", "client.py", 100, 499, "uploads.client.run", "function", text=body)

    prompt = build_prompt(
        "r1", "what does run do?", (huge,), 256, PromptBudget(context_window_tokens=2048)
    )

    assert prompt.truncated == ("C1",)
    user = prompt.input.messages[1].content
    assert "[C1] src/uploads/client.py:100-499" in user
    assert "100 |     step_0 = handle(step_-1)  # keep going" in user
    assert "more lines not shown)" in user
    assert prompt.input.prompt_tokens <= 2048 - 256


def test_nothing_fits_when_the_answer_takes_the_whole_window(
    uploads_snippets: tuple[Snippet, ...],
) -> None:
    prompt = build_prompt(
        "r1", "retry?", uploads_snippets, 900, PromptBudget(context_window_tokens=1024)
    )

    assert prompt.input.snippets == ()
    assert prompt.dropped == ("C1", "C2", "C3")
