"""The Generator contract, run against every adapter (see conftest)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from locus.answer.domain import (
    AnswerFinal,
    AnswerPolicy,
    AnswerRequest,
    AnswerText,
    CitedSnippet,
    Completion,
    GenerationInput,
    PromptBudget,
    Snippet,
    TextChunk,
    UsageReport,
    answer_question,
    cited_ids,
)

pytestmark = pytest.mark.contract

QUESTION = "Where is the retry limit enforced?"


async def test_streams_text_then_exactly_one_completion(
    adapter: Any, generation_input: GenerationInput
) -> None:
    events = [event async for event in adapter.generator.stream(generation_input)]

    assert isinstance(events[-1], Completion)
    assert all(isinstance(e, TextChunk) for e in events[:-1])
    text = "".join(e.text for e in events[:-1] if isinstance(e, TextChunk))
    assert text.strip()
    assert events[-1].finish_reason in {"stop", "length"}
    if adapter.always_cites:
        assert set(cited_ids(text)) <= {"C1", "C2"}
        assert cited_ids(text)
    assert adapter.generator.in_flight == 0


async def test_names_itself(adapter: Any) -> None:
    assert adapter.generator.name in {"extractive", "openai-compatible"}
    assert isinstance(adapter.generator.model, str)
    assert adapter.generator.in_flight == 0


async def test_closing_the_stream_early_ends_the_generation(
    adapter: Any, generation_input: GenerationInput
) -> None:
    stream = adapter.generator.stream(generation_input)
    first = await anext(stream)
    assert adapter.generator.in_flight == 1

    await stream.aclose()

    assert isinstance(first, TextChunk)
    assert adapter.generator.in_flight == 0


async def test_cancelling_the_consumer_ends_the_generation(
    adapter: Any, generation_input: GenerationInput
) -> None:
    started = asyncio.Event()

    async def consume() -> None:
        async with contextlib.aclosing(adapter.generator.stream(generation_input)) as stream:
            async for _ in stream:
                started.set()
                await asyncio.sleep(3600)  # a consumer that stalls mid-answer

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), timeout=60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert adapter.generator.in_flight == 0


async def test_serves_concurrent_generations(
    adapter: Any, generation_input: GenerationInput
) -> None:
    async def run() -> str:
        parts = []
        async for event in adapter.generator.stream(generation_input):
            if isinstance(event, TextChunk):
                parts.append(event.text)
        return "".join(parts)

    first, second = await asyncio.gather(run(), run())

    assert first.strip()
    assert second.strip()
    assert adapter.generator.in_flight == 0


async def test_an_answer_built_on_it_ends_with_exactly_one_final(
    adapter: Any, uploads_snippets: tuple[Snippet, ...]
) -> None:
    request = AnswerRequest("contract-2", QUESTION, uploads_snippets, max_tokens=48)
    policy = AnswerPolicy(budget=PromptBudget(context_window_tokens=2048))

    events = [e async for e in answer_question(request, adapter.generator, policy)]

    finals = [e for e in events if isinstance(e, AnswerFinal)]
    assert finals == [events[-1]]
    assert finals[0].status == "finished"
    usage = [e for e in events if isinstance(e, UsageReport)]
    assert len(usage) == 1
    assert usage[0].generator == adapter.generator.name
    assert usage[0].completion_tokens > 0
    assert any(isinstance(e, AnswerText) for e in events)
    if adapter.always_cites:
        assert finals[0].grounded
        cited = [e.snippet.citation_id for e in events if isinstance(e, CitedSnippet)]
        assert cited == ["C1", "C2"]
