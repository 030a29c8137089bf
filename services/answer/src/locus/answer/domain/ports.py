"""The Generator port: turns a prompt into a stream of text. Every adapter passes the contract
suite in tests/contract/answer."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Protocol

from locus.answer.domain.model import GenerationInput, GeneratorEvent


class Generator(Protocol):
    """``stream`` yields TextChunk events, then one Completion. It raises GeneratorError when
    the answer cannot be (fully) produced, and InsufficientContext before any text when the
    snippets do not answer the question. Closing the iterator early (``aclose``, or cancelling
    the task iterating it) stops the generation and releases what it holds."""

    @property
    def name(self) -> str:
        """Short adapter name reported in Usage: "extractive", "openai-compatible"."""
        ...

    @property
    def model(self) -> str:
        """The model that writes the answers ("" when no model is involved)."""
        ...

    @property
    def in_flight(self) -> int:
        """Generations currently open (streams started and not yet closed)."""
        ...

    def stream(self, request: GenerationInput) -> AsyncGenerator[GeneratorEvent, None]: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...
