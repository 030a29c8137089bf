"""The answer service over real gRPC, with the extractive generator or the OpenAI-compatible
one against the replay HTTP server of the contract tests (tests/support/sse_replay.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
import sse_replay as replay
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.answer.main import build, make_generator
from locus.answer.settings import AnswerSettings
from locus.rpc import ServiceRuntime
from locus.v1 import answer_pb2, answer_pb2_grpc, common_pb2

UPLOADS = Path(__file__).resolve().parents[2] / "unit" / "ast" / "fixtures" / "uploads"


def context_snippet(
    citation_id: str, file_name: str, start: int, end: int, symbol: str, kind: int, score: float
) -> answer_pb2.ContextSnippet:
    text = "\n".join((UPLOADS / file_name).read_text().splitlines()[start - 1 : end])
    location = common_pb2.CodeLocation(
        project_id="p1",
        snapshot_id="s1",
        file_id=f"f-{file_name}",
        relative_path=f"src/uploads/{file_name}",
        start_line=start,
        end_line=end,
        language="python",
        node_id=f"n-{symbol}",
    )
    return answer_pb2.ContextSnippet(
        citation_id=citation_id,
        chunk=common_pb2.Chunk(
            chunk_id=f"chunk-{file_name}-{start}",
            location=location,
            kind=common_pb2.CHUNK_KIND_FUNCTION,
            symbol_qualified_name=symbol,
            text=text,
        ),
        symbol_qualified_name=symbol,
        symbol_kind=kind,
        score=score,
        why="bm25 + vector",
    )


CONTEXT = [
    context_snippet(
        "C1",
        "policy.py",
        7,
        12,
        "uploads.policy.enforce_retry_limit",
        common_pb2.SYMBOL_KIND_FUNCTION,
        0.91,
    ),
    context_snippet(
        "C2",
        "client.py",
        42,
        51,
        "uploads.client.UploadClient.upload",
        common_pb2.SYMBOL_KIND_METHOD,
        0.74,
    ),
]


@dataclass
class AnswerHarness:
    runtime: ServiceRuntime
    stub: answer_pb2_grpc.AnswerServiceStub
    spans: InMemorySpanExporter
    generator: Any

    def request(self, **fields: Any) -> answer_pb2.GenerateRequest:
        fields.setdefault("request_id", "req-1")
        fields.setdefault("question", "Where is the retry limit enforced?")
        fields.setdefault("context", CONTEXT)
        return answer_pb2.GenerateRequest(**fields)

    async def events(self, request: answer_pb2.GenerateRequest) -> list[answer_pb2.GenerateEvent]:
        return [event async for event in self.stub.Generate(request, timeout=30)]

    def answer_statuses(self) -> list[str]:
        return [
            str(span.attributes["locus.answer.status"])
            for span in self.spans.get_finished_spans()
            if span.name == "answer.generate" and span.attributes
        ]


StartAnswer = Callable[..., Any]


@pytest.fixture
def replay_kit() -> ModuleType:
    return replay


@pytest.fixture
def replay_server() -> Iterator[Any]:
    with replay.ReplayServer() as server:
        yield server


@pytest.fixture
def start_answer(tmp_path: Path) -> StartAnswer:
    """``async with start_answer(**settings) as harness`` runs the service until the block ends."""

    @asynccontextmanager
    async def start(**overrides: Any) -> AsyncIterator[AnswerHarness]:
        settings = AnswerSettings(
            grpc_port=0, data_dir=tmp_path, shutdown_grace_seconds=1, **overrides
        )
        spans = InMemorySpanExporter()
        generator = make_generator(settings)  # what build() picks from the same settings
        runtime = build(settings, exporters=[spans], generator=generator)
        await runtime.start()
        channel = grpc.aio.insecure_channel(runtime.address)
        try:
            yield AnswerHarness(
                runtime=runtime,
                stub=answer_pb2_grpc.AnswerServiceStub(channel),
                spans=spans,
                generator=generator,
            )
        finally:
            await channel.close()
            await runtime.stop()

    return start
