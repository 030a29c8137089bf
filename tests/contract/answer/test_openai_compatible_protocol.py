"""The OpenAI-compatible generator against a real local HTTP server replaying recorded
vLLM / OpenAI streams: the request it sends, retries before the first byte only, failures
after it, and closing the stream dropping the connection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from locus.answer.adapters.openai_compatible import OpenAICompatibleGenerator
from locus.answer.domain import Completion, GenerationInput, GeneratorError, TextChunk
from locus.telemetry import REQUEST_ID_ATTRIBUTE, setup_telemetry, with_request_id

pytestmark = pytest.mark.contract

MODEL = "Qwen/Qwen2.5-Coder-7B-Instruct"


def generator_for(url: str, **options: Any) -> OpenAICompatibleGenerator:
    options.setdefault("retry_backoff_seconds", 0.01)
    return OpenAICompatibleGenerator(url, MODEL, **options)


async def run(generator: OpenAICompatibleGenerator, request: GenerationInput) -> list[Any]:
    try:
        return [event async for event in generator.stream(request)]
    finally:
        await generator.stop()


def text(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))


async def test_it_posts_a_streaming_chat_completion_request(
    replay_server: Any, generation_input: GenerationInput
) -> None:
    events = await run(generator_for(replay_server.base_url, api_key="s3cret"), generation_input)

    [seen] = replay_server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == "Bearer s3cret"
    assert seen.body["model"] == MODEL
    assert seen.body["stream"] is True
    assert seen.body["stream_options"] == {"include_usage": True}
    assert seen.body["max_tokens"] == generation_input.max_tokens
    assert [m["role"] for m in seen.body["messages"]] == ["system", "user"]
    assert "[C1] src/uploads/policy.py:7-12" in seen.body["messages"][1]["content"]
    assert text(events).startswith("The retry limit is enforced in `enforce_retry_limit` [C1]")
    assert events[-1] == Completion("stop", prompt_tokens=612, completion_tokens=68)


async def test_no_authorization_header_without_an_api_key(
    replay_server: Any, generation_input: GenerationInput
) -> None:
    await run(generator_for(replay_server.base_url), generation_input)

    assert "Authorization" not in replay_server.requests[0].headers


async def test_overload_and_server_errors_before_the_first_byte_are_retried(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    replay_server.then(
        replay_kit.Reply(status=503, body='{"error":{"message":"no capacity"}}'),
        replay_kit.Reply(status=429, body="{}", headers={"Retry-After": "0"}),
        replay_kit.Reply(hang_up_at_once=True),
    )

    events = await run(generator_for(replay_server.base_url, max_attempts=4), generation_input)

    assert len(replay_server.requests) == 4
    assert "enforce_retry_limit" in text(events)
    assert isinstance(events[-1], Completion)


async def test_retries_give_up_naming_the_server_and_the_last_problem(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    replay_server.default = replay_kit.Reply(status=502, body="bad gateway")

    with pytest.raises(GeneratorError) as failure:
        await run(generator_for(replay_server.base_url, max_attempts=3), generation_input)

    assert failure.value.code == "LLM_UNAVAILABLE"
    assert replay_server.base_url in failure.value.message
    assert "HTTP 502: bad gateway" in failure.value.message
    assert len(replay_server.requests) == 3


async def test_an_unreachable_server_is_named_in_the_error(
    replay_kit: Any, generation_input: GenerationInput
) -> None:
    url = replay_kit.free_port_url()

    with pytest.raises(GeneratorError) as failure:
        await run(generator_for(url, max_attempts=2), generation_input)

    assert failure.value.code == "LLM_UNAVAILABLE"
    assert f"the LLM server at {url} did not answer after 2 attempt(s)" in failure.value.message
    assert "ConnectError" in failure.value.message


async def test_a_rejected_request_is_not_retried(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    replay_server.default = replay_kit.Reply(
        status=404,
        body='{"object":"error","message":"The model `gpt-x` does not exist.",'
        '"type":"NotFoundError","param":null,"code":404}',
    )

    with pytest.raises(GeneratorError) as failure:
        await run(generator_for(replay_server.base_url), generation_input)

    assert failure.value.code == "LLM_REJECTED"
    assert "HTTP 404: The model `gpt-x` does not exist." in failure.value.message
    assert len(replay_server.requests) == 1


async def test_an_error_event_after_the_first_byte_fails_without_retrying(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    replay_server.default = replay_kit.Reply(sse=replay_kit.transcript("vllm_error_mid_stream.sse"))
    received: list[Any] = []
    generator = generator_for(replay_server.base_url)

    async def consume() -> None:
        async for event in generator.stream(generation_input):
            received.append(event)

    with pytest.raises(GeneratorError) as failure:
        await consume()
    await generator.stop()

    assert failure.value.code == "LLM_ERROR"
    assert "EngineDeadError" in failure.value.message
    assert text(received) == "The retry limit is enforced in `enforce_retry"
    assert len(replay_server.requests) == 1


async def test_a_connection_dropped_mid_answer_fails_without_retrying(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    replay_server.default = replay_kit.Reply(
        sse=replay_kit.transcript("vllm_chat_stream.sse"), drop_after_events=6
    )

    with pytest.raises(GeneratorError) as failure:
        await run(generator_for(replay_server.base_url), generation_input)

    assert failure.value.code == "LLM_STREAM_BROKEN"
    assert len(replay_server.requests) == 1


async def test_a_stream_that_ends_before_the_answer_is_complete_fails(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    events = replay_kit.transcript("vllm_chat_stream.sse").split("\n\n")
    replay_server.default = replay_kit.Reply(sse="\n\n".join(events[:10]) + "\n\n")

    with pytest.raises(GeneratorError, match="ended the stream before the answer was complete"):
        await run(generator_for(replay_server.base_url), generation_input)


async def test_keep_alive_comments_and_event_fields_are_ignored(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    body = replay_kit.transcript("openai_chat_stream.sse").replace(
        "data: {", ": keep-alive\n\nevent: message\ndata: {", 3
    )
    replay_server.default = replay_kit.Reply(sse=body)

    events = await run(generator_for(replay_server.base_url), generation_input)

    assert "`enforce_retry_limit` [C1]" in text(events)
    assert events[-1] == Completion("stop", prompt_tokens=598, completion_tokens=68)


async def test_closing_the_stream_drops_the_connection_the_server_sees_it(
    replay_server: Any, replay_kit: Any, generation_input: GenerationInput
) -> None:
    replay_server.default = replay_kit.Reply(
        sse=replay_kit.slow_transcript(), event_delay_seconds=0.02
    )
    generator = generator_for(replay_server.base_url)
    stream = generator.stream(generation_input)

    first = await anext(stream)
    await stream.aclose()

    assert isinstance(first, TextChunk)
    assert generator.in_flight == 0
    assert await asyncio.to_thread(replay_server.disconnected.wait, 5)
    assert replay_server.completed_streams == 0
    await generator.stop()


async def test_the_llm_call_is_a_traced_span_that_carries_the_trace_and_request_id(
    replay_server: Any, generation_input: GenerationInput, span_exporter: Any
) -> None:
    telemetry = setup_telemetry("answer-under-test", exporters=[span_exporter])
    generator = generator_for(replay_server.base_url, tracer_provider=telemetry.provider)
    with with_request_id("req-llm-1"):
        await run(generator, generation_input)
    telemetry.provider.force_flush()

    [call] = [s for s in span_exporter.get_finished_spans() if s.kind == SpanKind.CLIENT]
    assert call.attributes is not None
    assert call.attributes[REQUEST_ID_ATTRIBUTE] == "req-llm-1"
    assert (
        call.attributes.get("http.response.status_code", call.attributes.get("http.status_code"))
        == 200
    )
    [seen] = replay_server.requests
    headers = {k.lower(): v for k, v in seen.headers.items()}
    assert headers["x-request-id"] == "req-llm-1"
    assert headers["traceparent"].split("-")[1] == format(call.context.trace_id, "032x")
