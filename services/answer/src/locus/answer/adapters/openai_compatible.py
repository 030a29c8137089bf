"""A Generator on an OpenAI-compatible streaming chat API (vLLM's server, llama.cpp's server,
OpenAI): POST ``<base_url>/chat/completions`` with ``stream: true`` and read the
``chat.completion.chunk`` server-sent events.

Retries (connection errors, timeouts, HTTP 408/429/5xx, with back-off and ``Retry-After``)
happen only before the first event of the answer arrives; after that a failure ends the answer
with GeneratorError, never a second, different answer. Closing the stream closes the HTTP
response, which drops the connection, and vLLM aborts the request when its client goes away.
Each HTTP call is a traced client span carrying the trace context and the request ID.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
from opentelemetry.trace import TracerProvider

from locus.answer.adapters.server_sent_events import EventDecoder
from locus.answer.domain import (
    Completion,
    GenerationInput,
    GeneratorError,
    GeneratorEvent,
    TextChunk,
)
from locus.telemetry.http import traced_http_client

log = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_MAX_ERROR_BODY = 300


class _RetryBeforeFirstByte(Exception):
    pass


@dataclass
class _StreamState:
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    done: bool = False


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _error_message(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:_MAX_ERROR_BODY] or "(empty body)"
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:_MAX_ERROR_BODY]
        for key in ("message", "detail", "error"):
            if parsed.get(key):
                return str(parsed[key])[:_MAX_ERROR_BODY]
    return text[:_MAX_ERROR_BODY]


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(float(value), 0.0)
    except ValueError:
        return None


class OpenAICompatibleGenerator:
    name = "openai-compatible"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        connect_timeout_seconds: float = 5.0,
        read_timeout_seconds: float = 60.0,
        max_attempts: int = 3,
        retry_backoff_seconds: float = 0.5,
        max_retry_delay_seconds: float = 8.0,
        temperature: float = 0.0,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._url = f"{self.base_url}/chat/completions"
        self._model = model
        self._headers = {"Accept": "text/event-stream"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._max_attempts = max(max_attempts, 1)
        self._backoff = retry_backoff_seconds
        self._max_delay = max_retry_delay_seconds
        self._temperature = temperature
        self._client = traced_http_client(
            tracer_provider,
            timeout=httpx.Timeout(
                connect=connect_timeout_seconds,
                read=read_timeout_seconds,
                write=connect_timeout_seconds,
                pool=connect_timeout_seconds,
            ),
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
        )
        self._in_flight = 0

    @property
    def model(self) -> str:
        return self._model

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        await self._client.aclose()

    def _payload(self, request: GenerationInput) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
            "temperature": self._temperature,
        }

    async def stream(self, request: GenerationInput) -> AsyncGenerator[GeneratorEvent, None]:
        self._in_flight += 1
        response: httpx.Response | None = None
        try:
            response, first_lines, lines = await self._open(request)
            state = _StreamState()
            decoder = EventDecoder()
            for line in first_lines:
                for event in self._handle(decoder.feed(line), state):
                    yield event
            try:
                async for line in lines:
                    for event in self._handle(decoder.feed(line), state):
                        yield event
                    if state.done:
                        break
                else:
                    for event in self._handle(decoder.close(), state):
                        yield event
            except httpx.HTTPError as error:
                raise GeneratorError(
                    "LLM_STREAM_BROKEN",
                    f"the answer stream from {self._url} broke off: {_describe(error)}",
                ) from error
            if not state.done and state.finish_reason is None:
                raise GeneratorError(
                    "LLM_STREAM_BROKEN",
                    f"{self._url} ended the stream before the answer was complete",
                )
            yield Completion(
                state.finish_reason or "stop", state.prompt_tokens, state.completion_tokens
            )
        finally:
            if response is not None:
                await response.aclose()  # mid-stream this drops the connection
            self._in_flight -= 1

    async def _open(
        self, request: GenerationInput
    ) -> tuple[httpx.Response, list[str], AsyncIterator[str]]:
        """Send the request and read up to its first event, retrying what can be retried."""
        payload = self._payload(request)
        problem = ""
        for attempt in range(1, self._max_attempts + 1):
            delay = min(self._backoff * 2 ** (attempt - 1), self._max_delay)
            try:
                response = await self._client.send(
                    self._client.build_request(
                        "POST", self._url, json=payload, headers=self._headers
                    ),
                    stream=True,
                )
            except httpx.TransportError as error:
                problem = _describe(error)
            else:
                try:
                    return response, *await self._first_event(response)
                except _RetryBeforeFirstByte as retry:
                    problem = str(retry)
                    after = _retry_after(response)
                    if after is not None:
                        delay = min(after, self._max_delay)
                except BaseException:
                    await response.aclose()
                    raise
                await response.aclose()
            if attempt < self._max_attempts:
                log.warning(
                    "LLM request %s to %s failed before the first token (%s); retry %d/%d in %.1fs",
                    request.request_id,
                    self._url,
                    problem,
                    attempt,
                    self._max_attempts - 1,
                    delay,
                )
                await asyncio.sleep(delay)
        raise GeneratorError(
            "LLM_UNAVAILABLE",
            f"the LLM server at {self.base_url} did not answer after {self._max_attempts} "
            f"attempt(s): {problem}",
        )

    async def _first_event(self, response: httpx.Response) -> tuple[list[str], AsyncIterator[str]]:
        if response.status_code != 200:
            body = await response.aread()
            message = f"HTTP {response.status_code}: {_error_message(body)}"
            if response.status_code in RETRYABLE_STATUSES:
                raise _RetryBeforeFirstByte(message)
            raise GeneratorError("LLM_REJECTED", f"{self._url} rejected the request with {message}")
        lines = response.aiter_lines()
        buffered: list[str] = []
        try:
            async for line in lines:
                buffered.append(line)
                if line.startswith("data:"):
                    return buffered, lines
        except httpx.TransportError as error:
            raise _RetryBeforeFirstByte(
                f"connection lost before the first token: {_describe(error)}"
            ) from error
        raise _RetryBeforeFirstByte("the server closed the stream without sending anything")

    def _handle(self, data: str | None, state: _StreamState) -> list[GeneratorEvent]:
        if data is None or state.done:
            return []
        if data.strip() == "[DONE]":
            state.done = True
            return []
        try:
            chunk = json.loads(data)
        except ValueError:
            raise GeneratorError(
                "LLM_BAD_STREAM", f"{self._url} sent an event that is not JSON: {data[:200]!r}"
            ) from None
        if not isinstance(chunk, dict):
            raise GeneratorError("LLM_BAD_STREAM", f"{self._url} sent {data[:200]!r}")
        if "error" in chunk or chunk.get("object") == "error":
            error = chunk.get("error", chunk)
            message = error.get("message", error) if isinstance(error, dict) else error
            raise GeneratorError(
                "LLM_ERROR", f"{self._url} reported an error during the answer: {message}"
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            state.prompt_tokens = _int_or_none(usage.get("prompt_tokens"))
            state.completion_tokens = _int_or_none(usage.get("completion_tokens"))
        events: list[GeneratorEvent] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str) and content:
                events.append(TextChunk(content))
            if choice.get("finish_reason"):
                state.finish_reason = str(choice["finish_reason"])
        return events


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
