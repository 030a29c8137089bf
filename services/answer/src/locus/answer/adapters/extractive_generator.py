"""The default Generator: a grounded extractive answer composed from the snippets, no LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from locus.answer.domain import (
    Completion,
    GenerationInput,
    GeneratorEvent,
    TextChunk,
    compose_extractive_answer,
    estimate_tokens,
)


class ExtractiveGenerator:
    name = "extractive"
    model = ""

    def __init__(self) -> None:
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def stream(self, request: GenerationInput) -> AsyncGenerator[GeneratorEvent, None]:
        self._in_flight += 1
        try:
            # CPU work on a few snippets; small enough for the event loop
            pieces = compose_extractive_answer(request.question, request.snippets)
            produced = 0
            for piece in pieces:
                yield TextChunk(piece)
                produced += estimate_tokens(piece)
                await asyncio.sleep(0)  # let a cancellation or a slow reader in between pieces
            yield Completion(
                "stop",
                prompt_tokens=estimate_tokens("".join(s.text for s in request.snippets)),
                completion_tokens=produced,
            )
        finally:
            self._in_flight -= 1
