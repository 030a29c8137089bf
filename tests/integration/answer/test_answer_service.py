"""The answer service over real gRPC: stream order, grounding, failures, cancellation, input
validation; extractive by default, OpenAI-compatible when an LLM base URL is configured."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from locus.answer.adapters.extractive_generator import ExtractiveGenerator
from locus.answer.adapters.openai_compatible import OpenAICompatibleGenerator
from locus.v1 import answer_pb2

pytestmark = pytest.mark.integration

FINISHED = answer_pb2.FINAL_STATUS_FINISHED
FAILED = answer_pb2.FINAL_STATUS_FAILED


def kinds(events: list[answer_pb2.GenerateEvent]) -> list[str]:
    return [str(event.WhichOneof("event")) for event in events]


def order_of(events: list[answer_pb2.GenerateEvent]) -> list[str]:
    """Kinds with repeats collapsed: text, citation, usage, final."""
    collapsed: list[str] = []
    for kind in kinds(events):
        if not collapsed or collapsed[-1] != kind:
            collapsed.append(kind)
    return collapsed


def text(events: list[answer_pb2.GenerateEvent]) -> str:
    return "".join(e.text.text for e in events if e.WhichOneof("event") == "text")


async def test_extractive_answers_stream_text_citations_usage_and_one_final(
    start_answer: Any,
) -> None:
    async with start_answer() as answer:
        call = answer.stub.Generate(answer.request(), timeout=30)
        events = [event async for event in call]
        metadata = dict(await call.initial_metadata())

    assert isinstance(answer.generator, ExtractiveGenerator)
    assert order_of(events) == ["text", "citation", "usage", "final"]
    assert kinds(events).count("text") > 2  # streamed in deltas
    assert text(events).startswith("The best match is `enforce_retry_limit` (function) [C1]")
    citations = [e.citation for e in events if e.WhichOneof("event") == "citation"]
    assert [c.citation_id for c in citations] == ["C1", "C2"]
    assert citations[0].chunk_id == "chunk-policy.py-7"
    assert citations[0].location.relative_path == "src/uploads/policy.py"
    assert (citations[0].location.start_line, citations[0].location.end_line) == (7, 12)
    usage = events[-2].usage
    assert (usage.generator, usage.model) == ("extractive", "")
    assert usage.completion_tokens > 0
    assert events[-1].final == answer_pb2.Final(status=FINISHED, grounded=True)
    assert metadata["x-request-id"]
    assert answer.answer_statuses() == ["finished"]


async def test_the_openai_compatible_generator_is_used_when_an_llm_url_is_set(
    start_answer: Any, replay_server: Any
) -> None:
    async with start_answer(llm_base_url=replay_server.base_url, llm_model="qwen-coder") as answer:
        events = await answer.events(answer.request(max_tokens=300))

    assert isinstance(answer.generator, OpenAICompatibleGenerator)
    assert replay_server.requests[0].body["model"] == "qwen-coder"
    assert replay_server.requests[0].body["max_tokens"] == 300
    assert order_of(events) == ["text", "citation", "usage", "final"]
    assert "`enforce_retry_limit` [C1]" in text(events)
    assert events[-2].usage == answer_pb2.Usage(
        prompt_tokens=612, completion_tokens=68, generator="openai-compatible", model="qwen-coder"
    )
    assert events[-1].final.grounded


async def test_too_little_context_fails_closed_and_says_what_was_found(
    start_answer: Any,
) -> None:
    async with start_answer() as answer:
        none = await answer.events(answer.request(context=[]))
        weak = await answer.events(answer.request(min_relevance=0.95))
        off_topic = await answer.events(answer.request(question="How are thumbnails rendered?"))

    for events in (none, weak, off_topic):
        assert order_of(events) == ["text", "usage", "final"]
        assert events[-1].final.status == FINISHED
        assert not events[-1].final.grounded
        assert "I cannot answer this from the indexed code" in text(events)
    assert "relevance 0.91" in text(weak)
    assert "none of the retrieved snippets mentions thumbnails, rendered" in text(off_topic)


async def test_an_unreachable_llm_ends_with_an_error_naming_it_and_a_failed_final(
    start_answer: Any, replay_kit: Any
) -> None:
    url = replay_kit.free_port_url()
    settings = {"llm_base_url": url, "llm_model": "m", "llm_retry_backoff_seconds": 0.01}
    async with start_answer(**settings) as answer:
        events = await answer.events(answer.request())

    assert kinds(events) == ["usage", "error", "final"]
    assert events[1].error.code == "LLM_UNAVAILABLE"
    assert url in events[1].error.message
    assert events[-1].final.status == FAILED
    assert not events[-1].final.grounded
    assert answer.answer_statuses() == ["failed"]


async def test_an_llm_failure_mid_answer_keeps_the_text_and_ends_failed(
    start_answer: Any, replay_server: Any, replay_kit: Any
) -> None:
    replay_server.default = replay_kit.Reply(sse=replay_kit.transcript("vllm_error_mid_stream.sse"))
    async with start_answer(llm_base_url=replay_server.base_url, llm_model="m") as answer:
        events = await answer.events(answer.request())

    assert order_of(events) == ["text", "usage", "error", "final"]
    assert text(events) == "The retry limit is enforced in `enforce_retry"
    assert events[-2].error.code == "LLM_ERROR"
    assert events[-1].final.status == FAILED
    assert len(replay_server.requests) == 1


async def test_a_client_cancel_stops_the_generation_and_drops_the_llm_request(
    start_answer: Any, replay_server: Any, replay_kit: Any
) -> None:
    replay_server.default = replay_kit.Reply(
        sse=replay_kit.slow_transcript(), event_delay_seconds=0.02
    )
    async with start_answer(llm_base_url=replay_server.base_url, llm_model="m") as answer:
        call = answer.stub.Generate(answer.request(), timeout=30)
        first = await anext(aiter(call))
        assert answer.generator.in_flight == 1
        call.cancel()

        assert await asyncio.to_thread(replay_server.disconnected.wait, 5)
        for _ in range(100):
            if answer.answer_statuses():
                break
            await asyncio.sleep(0.02)
        assert answer.generator.in_flight == 0
        assert answer.answer_statuses() == ["cancelled"]

    assert first.WhichOneof("event") == "text"
    assert replay_server.completed_streams == 0
    assert call.cancelled()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"question": ""}, "question is empty"),
        ({"question": "   "}, "question is empty"),
        ({"question": "why " * 4001}, "the limit is 16000"),
        ({"max_tokens": -5}, "max_tokens"),
    ],
)
async def test_bad_requests_are_invalid_argument(
    start_answer: Any, fields: dict[str, Any], message: str
) -> None:
    async with start_answer() as answer:
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await answer.events(answer.request(**fields))

    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (error.value.details() or "")


async def test_duplicate_citation_ids_are_invalid_argument(start_answer: Any) -> None:
    async with start_answer() as answer:
        request = answer.request()
        request.context[1].citation_id = "C1"
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await answer.events(request)

    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "citation id C1 is used by more than one context snippet" in (
        error.value.details() or ""
    )
