"""`locus ask` output: located code, streamed text, citations as path:line, the final status."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import pytest
from rich.console import Console

from locus.cli.answer_stream import AnswerPrinter, print_answer
from locus.cli.exit_codes import ExitCode
from locus.v1 import answer_pb2, common_pb2, gateway_pb2

pytestmark = pytest.mark.unit


def recording_console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=120, color_system=None, highlight=False), buffer


def events() -> list[gateway_pb2.AskEvent]:
    location = common_pb2.CodeLocation(relative_path="bus.py", start_line=230, end_line=260)
    return [
        gateway_pb2.AskEvent(
            request_id="r_9",
            located=gateway_pb2.LocateResponse(
                files=[gateway_pb2.LocatedFile(relative_path="bus.py", score=0.9)]
            ),
        ),
        gateway_pb2.AskEvent(text=answer_pb2.TextDelta(text="Events are dead-lettered ")),
        gateway_pb2.AskEvent(text=answer_pb2.TextDelta(text="in [C1].")),
        gateway_pb2.AskEvent(citation=answer_pb2.Citation(citation_id="C1", location=location)),
        gateway_pb2.AskEvent(
            usage=answer_pb2.Usage(generator="extractive", prompt_tokens=10, completion_tokens=5)
        ),
        gateway_pb2.AskEvent(
            final=answer_pb2.Final(status=answer_pb2.FINAL_STATUS_FINISHED, grounded=True)
        ),
    ]


async def stream(items: list[gateway_pb2.AskEvent]) -> AsyncIterator[gateway_pb2.AskEvent]:
    for item in items:
        yield item


async def test_everything_is_printed_in_the_order_it_arrives() -> None:
    console, buffer = recording_console()
    outcome = await print_answer(stream(events()), console)
    text = buffer.getvalue()
    order = [text.index(part) for part in ("bus.py", "answer", "Events are", "[C1] bus.py:230")]
    assert order == sorted(order)
    assert "Events are dead-lettered in [C1].\n" in text  # deltas joined, brackets kept as text
    assert "finished (grounded" in text
    # No model ran: the usage line says the counts are estimates, not a model's tokens.
    assert "extractive (no language model): about 10 tokens read, 5 written" in text
    assert "completion tokens" not in text
    assert outcome.request_id == "r_9"
    assert outcome.exit_code == ExitCode.OK


def test_a_failed_or_missing_final_status_is_a_failure() -> None:
    console, _ = recording_console()
    printer = AnswerPrinter(console)
    printer.handle(
        gateway_pb2.AskEvent(error=answer_pb2.GenerationError(code="llm", message="down"))
    )
    printer.handle(
        gateway_pb2.AskEvent(final=answer_pb2.Final(status=answer_pb2.FINAL_STATUS_FAILED))
    )
    assert printer.outcome.exit_code == ExitCode.FAILED
    assert AnswerPrinter(console).outcome.exit_code == ExitCode.FAILED


def test_a_cancelled_answer_exits_like_ctrl_c() -> None:
    console, _ = recording_console()
    printer = AnswerPrinter(console)
    printer.handle(
        gateway_pb2.AskEvent(final=answer_pb2.Final(status=answer_pb2.FINAL_STATUS_CANCELLED))
    )
    assert printer.outcome.exit_code == ExitCode.INTERRUPTED


async def test_a_snippet_is_printed_as_its_location_and_a_numbered_fenced_block() -> None:
    console, buffer = recording_console()
    location = common_pb2.CodeLocation(
        relative_path="bus.py", start_line=9, end_line=10, language="python"
    )
    snippet = gateway_pb2.Snippet(
        citation_id="C1",
        location=location,
        symbol_qualified_name="bus.EventBus.publish",
        lines=[
            gateway_pb2.NumberedLine(number=9, text="    def publish(self, subject):"),
            gateway_pb2.NumberedLine(number=10, text="        return [subject]"),
        ],
    )
    bare = gateway_pb2.Snippet(citation_id="C2", location=location)
    await print_answer(
        stream([gateway_pb2.AskEvent(snippet=snippet), gateway_pb2.AskEvent(snippet=bare)]),
        console,
    )
    assert buffer.getvalue() == (
        "**bus.py:9-10** (C1, bus.EventBus.publish)\n"
        "```python\n"
        " 9      def publish(self, subject):\n"
        "10          return [subject]\n"
        "```\n"
        "**bus.py:9-10** (C2) (lines not available)\n"
    )


def test_a_models_usage_is_its_own_count() -> None:
    console, buffer = recording_console()
    AnswerPrinter(console).handle(
        gateway_pb2.AskEvent(
            usage=answer_pb2.Usage(
                generator="openai-compatible",
                model="qwen2.5-coder",
                prompt_tokens=2770,
                completion_tokens=511,
            )
        )
    )
    assert "openai-compatible qwen2.5-coder: 2770 prompt + 511 completion tokens" in (
        buffer.getvalue()
    )
