"""The answer stream: event order, citation checking, fail-closed answers, failures, closing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from locus.answer.domain import (
    AnswerEvent,
    AnswerFinal,
    AnswerPolicy,
    AnswerProblem,
    AnswerRequest,
    AnswerText,
    CitedSnippet,
    Completion,
    GeneratorError,
    InsufficientContext,
    Snippet,
    TextChunk,
    UsageReport,
    answer_question,
)

pytestmark = pytest.mark.unit

QUESTION = "Where is the retry limit enforced?"


async def collect(request: AnswerRequest, generator: Any) -> list[AnswerEvent]:
    events = [e async for e in answer_question(request, generator, AnswerPolicy())]
    finals = [e for e in events if isinstance(e, AnswerFinal)]
    assert len(finals) == 1
    assert events[-1] is finals[0]
    return events


def kinds(events: list[AnswerEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def text_of(events: list[AnswerEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, AnswerText))


@pytest.fixture
def request_(uploads_snippets: tuple[Snippet, ...]) -> AnswerRequest:
    return AnswerRequest("r1", QUESTION, uploads_snippets, max_tokens=200)


async def test_a_cited_answer_streams_text_then_citations_usage_and_a_grounded_final(
    request_: AnswerRequest, scripted: Any
) -> None:
    generator = scripted(
        TextChunk("The limit is enforced in `enforce_retry_limit` [C1]"),
        TextChunk(", called by `UploadClient.upload` [C2]."),
        Completion("stop", prompt_tokens=412, completion_tokens=23),
    )

    events = await collect(request_, generator)

    assert kinds(events) == [
        "AnswerText",
        "AnswerText",
        "CitedSnippet",
        "CitedSnippet",
        "UsageReport",
        "AnswerFinal",
    ]
    cited = [e.snippet for e in events if isinstance(e, CitedSnippet)]
    assert [s.citation_id for s in cited] == ["C1", "C2"]
    assert cited[0].location.relative_path == "src/uploads/policy.py"
    assert events[-2] == UsageReport(412, 23, "scripted", "script-1")
    assert events[-1] == AnswerFinal("finished", grounded=True, message="")
    assert generator.inputs[0].max_tokens == 200
    assert (generator.closed, generator.in_flight) == (1, 0)


async def test_citing_an_unknown_id_is_reported_and_not_grounded(
    request_: AnswerRequest, scripted: Any
) -> None:
    generator = scripted(
        TextChunk("Enforced in policy.py [C1] and in the server [C9]."), Completion("stop")
    )

    events = await collect(request_, generator)

    assert kinds(events)[-4:] == ["CitedSnippet", "UsageReport", "AnswerProblem", "AnswerFinal"]
    problem, final = events[-2], events[-1]
    assert isinstance(problem, AnswerProblem)
    assert problem.code == "UNGROUNDED_CITATIONS"
    assert "C9" in problem.message
    assert isinstance(final, AnswerFinal)
    assert (final.status, final.grounded) == ("finished", False)
    assert "C9" in final.message


async def test_an_answer_citing_nothing_is_reported_and_not_grounded(
    request_: AnswerRequest, scripted: Any
) -> None:
    events = await collect(request_, scripted(TextChunk("It is three."), Completion("stop")))

    problem, final = events[-2], events[-1]
    assert isinstance(problem, AnswerProblem)
    assert problem.code == "NO_CITATIONS"
    assert final == AnswerFinal("finished", False, problem.message)


async def test_no_snippets_fails_closed_without_calling_the_generator(scripted: Any) -> None:
    generator = scripted(TextChunk("should not run"))

    events = await collect(AnswerRequest("r1", QUESTION, ()), generator)

    assert kinds(events) == ["AnswerText", "UsageReport", "AnswerFinal"]
    assert "I cannot answer this from the indexed code" in text_of(events)
    assert "Nothing was retrieved" in text_of(events)
    assert events[-1] == AnswerFinal(
        "finished", False, "insufficient context: no code was retrieved for the question"
    )
    assert generator.inputs == []


async def test_snippets_all_below_min_relevance_fail_closed_listing_what_was_found(
    request_: AnswerRequest, scripted: Any
) -> None:
    generator = scripted(TextChunk("should not run"))

    events = await collect(replace(request_, min_relevance=0.95), generator)

    text = text_of(events)
    assert "minimum relevance 0.95" in text
    assert "- src/uploads/policy.py:7-12 `uploads.policy.enforce_retry_limit` (function)" in text
    assert "relevance 0.92" in text
    final = events[-1]
    assert isinstance(final, AnswerFinal)
    assert not final.grounded
    assert generator.inputs == []


async def test_snippets_below_min_relevance_are_left_out_of_the_prompt(
    request_: AnswerRequest, scripted: Any
) -> None:
    generator = scripted(TextChunk("[C1]"), Completion("stop"))

    await collect(replace(request_, min_relevance=0.5), generator)

    assert [s.citation_id for s in generator.inputs[0].snippets] == ["C1", "C2"]
    assert "[C3]" not in generator.inputs[0].messages[1].content


async def test_a_generator_failure_ends_with_an_error_and_a_failed_final(
    request_: AnswerRequest, scripted: Any
) -> None:
    failure = GeneratorError("LLM_STREAM_BROKEN", "the stream from http://llm/v1 broke off")
    generator = scripted(TextChunk("The limit [C1]"), failure)

    events = await collect(request_, generator)

    assert kinds(events) == ["AnswerText", "UsageReport", "AnswerProblem", "AnswerFinal"]
    assert events[-2] == AnswerProblem("LLM_STREAM_BROKEN", failure.message)
    assert events[-1] == AnswerFinal("failed", False, failure.message)
    usage = events[1]
    assert isinstance(usage, UsageReport)
    assert usage.completion_tokens > 0
    assert generator.closed == 1


async def test_insufficient_context_from_the_generator_fails_closed(
    request_: AnswerRequest, scripted: Any
) -> None:
    events = await collect(request_, scripted(InsufficientContext("nothing mentions thumbnails")))

    assert "nothing mentions thumbnails" in text_of(events)
    assert events[-1] == AnswerFinal(
        "finished", False, "insufficient context: nothing mentions thumbnails"
    )


async def test_closing_the_answer_early_closes_the_generators_stream(
    request_: AnswerRequest, scripted: Any
) -> None:
    generator = scripted(TextChunk("one [C1]"), TextChunk("two"), Completion("stop"))
    answer = answer_question(request_, generator, AnswerPolicy())

    first = await anext(answer)
    assert generator.in_flight == 1
    await answer.aclose()

    assert first == AnswerText("one [C1]")
    assert (generator.closed, generator.in_flight) == (1, 0)


async def test_an_answer_cut_off_at_max_tokens_says_so(
    request_: AnswerRequest, scripted: Any
) -> None:
    events = await collect(request_, scripted(TextChunk("In [C1] the"), Completion("length")))

    assert events[-1] == AnswerFinal("finished", True, "the answer was cut off at max_tokens (200)")


async def test_a_generation_aborted_by_the_model_server_is_cancelled(
    request_: AnswerRequest, scripted: Any
) -> None:
    events = await collect(request_, scripted(TextChunk("In [C1]"), Completion("abort")))

    final = events[-1]
    assert isinstance(final, AnswerFinal)
    assert final.status == "cancelled"


async def test_usage_is_estimated_when_the_generator_does_not_count(
    request_: AnswerRequest, scripted: Any
) -> None:
    events = await collect(request_, scripted(TextChunk("In [C1]." * 10), Completion("stop")))

    usage = next(e for e in events if isinstance(e, UsageReport))
    assert usage.prompt_tokens > 100
    assert usage.completion_tokens == 23  # 80 characters / 3.5
