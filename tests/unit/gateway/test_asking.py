"""Ask's service layer against fake downstream ports: located first, the answer relayed, exactly
one final whatever happens, the context bundle, what is recorded, and cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from locus.gateway.asking import AskSession
from locus.gateway.domain.errors import InvalidRequest
from locus.gateway.domain.requests import ArtifactKind, RequestKind, RequestStatus
from locus.rpc import Unavailable
from locus.v1 import answer_pb2, common_pb2
from locus.v1 import answer_pb2 as pb

pytestmark = pytest.mark.unit

QUESTION = "why does place_order charge the card?"


async def start(service: Any, max_context_chunks: int = 0) -> tuple[AskSession, Any]:
    entry = await service.journal.open(RequestKind.ASK, "shop", QUESTION, request_id="ask-1")
    session = AskSession(entry)
    events = service.asker.ask("shop", QUESTION, max_context_chunks, session)
    return session, events


def kinds(events: list[Any]) -> list[str]:
    return [e.WhichOneof("event") for e in events]


def citation(citation_id: str, chunk_id: str) -> Any:
    return pb.Citation(
        citation_id=citation_id,
        chunk_id=chunk_id,
        location=common_pb2.CodeLocation(relative_path="src/shop/orders.py", start_line=14),
    )


@pytest.fixture(autouse=True)
def hits(service: Any) -> None:
    service.search.hits = [
        ("c-place", 0.032, 1, 1),
        ("c-charge", 0.030, 2, 3),
        ("c-test", 0.020, 3, 0),
    ]


async def test_located_then_the_answer_then_one_final(service: Any) -> None:
    service.answers.script = [
        pb.GenerateEvent(text=pb.TextDelta(text="place_order calls ")),
        pb.GenerateEvent(text=pb.TextDelta(text="charge_card [C1].")),
        pb.GenerateEvent(citation=citation("C1", "c-place")),
        pb.GenerateEvent(usage=pb.Usage(prompt_tokens=120, completion_tokens=9, generator="x")),
        pb.GenerateEvent(final=pb.Final(status=pb.FINAL_STATUS_FINISHED, grounded=True)),
        pb.GenerateEvent(text=pb.TextDelta(text="after the final: dropped")),
    ]
    _, stream = await start(service)
    events = [event async for event in stream]

    assert kinds(events) == ["located", "text", "text", "citation", "snippet", "usage", "final"]
    assert {e.request_id for e in events} == {"ask-1"}
    assert [s.symbol.name for s in events[0].located.symbols][:2] == ["place_order", "charge_card"]
    assert events[-1].final.status == pb.FINAL_STATUS_FINISHED
    assert events[-1].final.grounded

    generate = service.answers.requests[0]
    assert generate.request_id == "ask-1"
    assert generate.question == QUESTION
    assert generate.max_tokens == service.settings.answer_max_tokens
    context = list(generate.context)
    assert [c.citation_id for c in context] == ["C1", "C2", "C3"]
    assert [c.chunk.chunk_id for c in context] == ["c-place", "c-charge", "c-test"]
    assert context[0].chunk.text.startswith("def place_order")
    assert context[0].symbol_qualified_name == "shop.orders.OrderService.place_order"
    assert context[0].symbol_kind == common_pb2.SYMBOL_KIND_METHOD
    assert context[0].why.startswith("identifier: `place_order` is its name")
    assert service.answers.streams[0].cancelled.is_set()  # closed once the final arrived

    stored, citations = await service.history.get("ask-1")
    assert stored.status == RequestStatus.COMPLETED
    assert stored.answer_text == "place_order calls charge_card [C1]."
    assert [c.chunk_id for c in citations] == ["c-place"]
    assert stored.response == events[0].located.SerializeToString()
    artifacts = await service.store.artifacts(["ask-1"])
    assert [(a.kind, a.chunk_id) for a in artifacts["ask-1"]] == [
        (ArtifactKind.CHUNK, "c-place"),
        (ArtifactKind.CHUNK, "c-charge"),
        (ArtifactKind.CHUNK, "c-test"),
        (ArtifactKind.CITATION, "c-place"),
        (ArtifactKind.CONTEXT, "c-place"),
        (ArtifactKind.CONTEXT, "c-charge"),
        (ArtifactKind.CONTEXT, "c-test"),
    ]
    assert ("answer.completed", ("ask-1", "p_shop", "completed", 1)) in service.audit.events


async def test_each_citation_is_followed_by_the_file_lines_it_cites(service: Any) -> None:
    orders = "".join(f"line {number} of orders.py\n" for number in range(1, 31))
    service.projects.files = {"src/shop/orders.py": orders}
    cited = pb.Citation(
        citation_id="C1",
        chunk_id="c-place",
        location=common_pb2.CodeLocation(
            relative_path="src/shop/orders.py", start_line=14, end_line=21
        ),
    )
    service.answers.script = [
        pb.GenerateEvent(citation=cited),
        pb.GenerateEvent(final=pb.Final(status=pb.FINAL_STATUS_FINISHED)),
    ]
    _, stream = await start(service)
    events = [event async for event in stream]

    snippet = next(e.snippet for e in events if e.WhichOneof("event") == "snippet")
    assert snippet.citation_id == "C1"
    assert snippet.symbol_qualified_name == "shop.orders.OrderService.place_order"
    assert (snippet.location.relative_path, snippet.location.language) == (
        "src/shop/orders.py",
        "python",
    )
    assert (snippet.location.start_line, snippet.location.end_line) == (14, 21)
    assert [(line.number, line.text) for line in snippet.lines] == [
        (number, f"line {number} of orders.py") for number in range(14, 22)
    ]


async def test_a_snippet_of_an_unreadable_file_has_no_invented_lines(service: Any) -> None:
    service.answers.script = [
        pb.GenerateEvent(citation=citation("C1", "c-place")),  # the file is not stored
        pb.GenerateEvent(final=pb.Final(status=pb.FINAL_STATUS_FINISHED)),
    ]
    _, stream = await start(service)
    events = [event async for event in stream]

    snippet = next(e.snippet for e in events if e.WhichOneof("event") == "snippet")
    assert snippet.location.relative_path == "src/shop/orders.py"
    assert list(snippet.lines) == []  # the one-line chunk is not lines 14-21 of the file
    stored, _ = await service.history.get("ask-1")
    assert "snippet of C1 from the chunk" in stored.notes


async def test_the_context_bundle_is_bounded(service: Any) -> None:
    service.answers.script = [pb.GenerateEvent(final=pb.Final(status=pb.FINAL_STATUS_FINISHED))]
    _, stream = await start(service, max_context_chunks=1)
    _ = [event async for event in stream]
    assert [c.citation_id for c in service.answers.requests[0].context] == ["C1"]


async def test_invalid_context_size_fails_before_any_event(service: Any) -> None:
    _, stream = await start(service, max_context_chunks=1000)
    with pytest.raises(InvalidRequest, match="max_context_chunks must be at most 32"):
        await anext(stream)
    assert service.search.requests == []


async def test_an_answer_service_that_is_down_gives_an_error_and_a_failed_final(
    service: Any,
) -> None:
    service.answers.script = [Unavailable("answer service at 127.0.0.1:50055 is unavailable: x")]
    _, stream = await start(service)
    events = [event async for event in stream]
    assert kinds(events) == ["located", "error", "final"]
    assert events[1].error.code == "UNAVAILABLE"
    assert events[1].error.message.startswith("answer service at 127.0.0.1:50055")
    assert events[2].final.status == pb.FINAL_STATUS_FAILED
    stored, _ = await service.history.get("ask-1")
    assert (stored.status, stored.error_code) == (RequestStatus.FAILED, "UNAVAILABLE")


async def test_a_stream_that_breaks_midway_still_ends_with_one_final(service: Any) -> None:
    service.answers.script = [
        pb.GenerateEvent(text=pb.TextDelta(text="partial")),
        Unavailable("answer service at 127.0.0.1:50055 is unavailable: reset"),
    ]
    _, stream = await start(service)
    events = [event async for event in stream]
    assert kinds(events) == ["located", "text", "error", "final"]
    stored, _ = await service.history.get("ask-1")
    assert stored.answer_text == "partial"
    assert stored.status == RequestStatus.FAILED


async def test_a_stream_without_final_gets_a_failed_one(service: Any) -> None:
    service.answers.script = [pb.GenerateEvent(text=pb.TextDelta(text="hello"))]
    _, stream = await start(service)
    events = [event async for event in stream]
    assert kinds(events) == ["located", "text", "error", "final"]
    assert events[-1].final.status == pb.FINAL_STATUS_FAILED
    assert "without a final status" in events[-1].final.message


async def test_answer_errors_and_failed_finals_are_relayed(service: Any) -> None:
    service.answers.script = [
        pb.GenerateEvent(error=pb.GenerationError(code="LLM_TIMEOUT", message="vLLM timed out")),
        pb.GenerateEvent(final=pb.Final(status=pb.FINAL_STATUS_FAILED, message="vLLM timed out")),
    ]
    _, stream = await start(service)
    events = [event async for event in stream]
    assert kinds(events) == ["located", "error", "final"]
    stored, _ = await service.history.get("ask-1")
    assert (stored.status, stored.error_code, stored.error_message) == (
        RequestStatus.FAILED,
        "LLM_TIMEOUT",
        "vLLM timed out",
    )


async def test_a_client_that_leaves_cancels_the_answer(service: Any) -> None:
    service.answers.script = [pb.GenerateEvent(text=pb.TextDelta(text="thinking"))]
    service.answers.hang = True
    _, stream = await start(service)
    assert (await anext(stream)).WhichOneof("event") == "located"
    assert (await anext(stream)).WhichOneof("event") == "text"
    await stream.aclose()  # what grpc does when the client cancels between two events

    assert service.answers.streams[0].cancelled.is_set()
    stored, _ = await service.history.get("ask-1")
    assert (stored.status, stored.error_code) == (RequestStatus.CANCELLED, "CANCELLED")
    assert stored.answer_text == "thinking"


async def test_a_cancelled_task_cancels_the_answer(service: Any) -> None:
    service.answers.hang = True
    _, stream = await start(service)
    received: list[Any] = []

    async def consume() -> None:
        async for event in stream:
            received.append(event)

    task = asyncio.ensure_future(consume())
    await service.answers.started.wait()
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert kinds(received) == ["located"]
    assert service.answers.streams[0].cancelled.is_set()
    stored, _ = await service.history.get("ask-1")
    assert stored.status == RequestStatus.CANCELLED


async def test_the_done_callback_cancels_the_stream(service: Any) -> None:
    service.answers.hang = True
    session, stream = await start(service)
    await anext(stream)
    waiting = asyncio.ensure_future(anext(stream))
    await service.answers.started.wait()
    session.cancel()  # what the RPC's done callback does when the client goes away
    # The fake stream ends once cancelled, without a final: the gateway adds the one final.
    rest = [await waiting] + [event async for event in stream]
    assert kinds(rest) == ["error", "final"]
    assert service.answers.streams[0].cancelled.is_set()
    stored, _ = await service.history.get("ask-1")
    assert stored.status == RequestStatus.CANCELLED


def test_generate_events_are_answer_events() -> None:
    assert answer_pb2.GenerateEvent is pb.GenerateEvent
