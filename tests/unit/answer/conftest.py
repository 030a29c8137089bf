"""Snippets cut from the `uploads` fixture package (tests/unit/ast/fixtures) for the answer
domain tests, and a scripted generator for the answer-stream tests."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from pathlib import Path

import pytest

from locus.answer.domain import (
    GenerationInput,
    GeneratorError,
    GeneratorEvent,
    Snippet,
    SnippetLocation,
)

UPLOADS = Path(__file__).resolve().parents[1] / "ast" / "fixtures" / "uploads"

MakeSnippet = Callable[..., Snippet]


def cut(file_name: str, start: int, end: int) -> str:
    lines = (UPLOADS / file_name).read_text().splitlines()
    return "\n".join(lines[start - 1 : end])


def make_snippet(
    citation_id: str,
    file_name: str,
    start: int,
    end: int,
    symbol: str = "",
    kind: str = "",
    score: float = 1.0,
    why: str = "",
    text: str | None = None,
) -> Snippet:
    return Snippet(
        citation_id=citation_id,
        chunk_id=f"chunk-{citation_id}",
        text=cut(file_name, start, end) if text is None else text,
        location=SnippetLocation(
            project_id="p1",
            snapshot_id="s1",
            file_id=f"f-{file_name}",
            relative_path=f"src/uploads/{file_name}",
            start_line=start,
            end_line=end,
            language="python",
        ),
        symbol_qualified_name=symbol,
        symbol_kind=kind,
        score=score,
        why=why,
    )


@pytest.fixture
def snippet() -> MakeSnippet:
    return make_snippet


@pytest.fixture
def uploads_snippets() -> tuple[Snippet, ...]:
    return (
        make_snippet(
            "C1",
            "policy.py",
            7,
            12,
            "uploads.policy.enforce_retry_limit",
            "function",
            score=0.92,
            why="bm25: retry limit",
        ),
        make_snippet(
            "C2",
            "client.py",
            42,
            51,
            "uploads.client.UploadClient.upload",
            "method",
            score=0.71,
            why="calls enforce_retry_limit",
        ),
        make_snippet(
            "C3", "errors.py", 8, 13, "uploads.errors.RetryExhausted", "class", score=0.40
        ),
    )


class ScriptedGenerator:
    """A Generator that streams a fixed script; records what it was given and whether its
    stream was closed. Only for pure-logic tests of the answer stream."""

    name = "scripted"
    model = "script-1"

    def __init__(self, *script: GeneratorEvent | Exception) -> None:
        self.script = script
        self.inputs: list[GenerationInput] = []
        self.closed = 0
        self.in_flight = 0

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def stream(self, request: GenerationInput) -> AsyncGenerator[GeneratorEvent, None]:
        self.inputs.append(request)
        self.in_flight += 1
        try:
            for item in self.script:
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            self.in_flight -= 1
            self.closed += 1


@pytest.fixture
def scripted() -> type[ScriptedGenerator]:
    return ScriptedGenerator


__all__ = ["GeneratorError"]
