"""``locus ask``: print an AskEvent stream as it arrives — the located code first, then the
answer text, then citations as ``path:line``, each with its snippet (``**path:start-end**`` and
a fenced, line-numbered block of the cited lines), then the final status."""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape

from locus.cli.exit_codes import ExitCode
from locus.cli.json_output import line_span
from locus.cli.terminal_output import print_code_block, print_located
from locus.v1 import answer_pb2, gateway_pb2

LOCATED_FILES_SHOWN = 5


@dataclass
class AskOutcome:
    request_id: str = ""
    status: int = answer_pb2.FINAL_STATUS_UNSPECIFIED
    grounded: bool = False
    message: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        if self.status == answer_pb2.FINAL_STATUS_FINISHED and not self.errors:
            return ExitCode.OK
        if self.status == answer_pb2.FINAL_STATUS_CANCELLED:
            return ExitCode.INTERRUPTED
        return ExitCode.FAILED


def final_label(status: int) -> str:
    return answer_pb2.FinalStatus.Name(status).removeprefix("FINAL_STATUS_").lower()


class AnswerPrinter:
    """Prints one answer stream; text deltas go straight to the terminal, unformatted."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._in_text = False
        self._citations_started = False
        self._project_names: dict[str, str] = {}  # a scoped answer's projects, by id
        self.outcome = AskOutcome()

    def _end_text(self) -> None:
        if self._in_text:
            self._console.file.write("\n")
            self._console.file.flush()
            self._in_text = False

    def handle(self, event: gateway_pb2.AskEvent) -> None:
        if event.request_id:
            self.outcome.request_id = event.request_id
        kind = event.WhichOneof("event")
        if kind == "located":
            located = gateway_pb2.LocateResponse()
            located.CopyFrom(event.located)
            self._project_names = {p.project_id: p.name for p in located.projects}
            del located.files[LOCATED_FILES_SHOWN:]
            print_located(self._console, located, max_symbols_per_file=2)
            self._console.print("[bold]answer[/]")
        elif kind == "text":
            self._console.file.write(event.text.text)
            self._console.file.flush()
            self._in_text = True
        elif kind == "citation":
            self._end_text()
            if not self._citations_started:
                self._console.print("[bold]citations[/]")
                self._citations_started = True
            location = event.citation.location
            project = self._project_names.get(location.project_id, "")
            self._console.print(
                f"  [{escape(event.citation.citation_id)}] "
                + (f"{escape(f'[{project}]')} " if project else "")
                + f"{escape(line_span(location.relative_path, location.start_line, 0))}"
                + (
                    f" [dim](lines {location.start_line}-{location.end_line})[/]"
                    if location.end_line > location.start_line
                    else ""
                )
            )
        elif kind == "snippet":
            self._end_text()
            snippet = event.snippet
            location = snippet.location
            heading = f"({snippet.citation_id}" + (
                f", {snippet.symbol_qualified_name})" if snippet.symbol_qualified_name else ")"
            )
            if snippet.lines:
                print_code_block(
                    self._console,
                    location.relative_path,
                    snippet.lines,
                    location.language,
                    heading=heading,
                )
            else:
                span = line_span(location.relative_path, location.start_line, location.end_line)
                self._console.print(
                    f"**{span}** {heading} (lines not available)", markup=False, highlight=False
                )
        elif kind == "usage":
            self._end_text()
            usage = event.usage
            if usage.generator == "extractive":
                # No model ran: the counts are the extractive generator's estimates.
                self._console.print(
                    "[dim]extractive (no language model): about "
                    f"{usage.prompt_tokens} tokens read, {usage.completion_tokens} written[/]"
                )
            else:
                self._console.print(
                    f"[dim]{escape(usage.generator)} {escape(usage.model)}: "
                    f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion "
                    "tokens[/]"
                )
        elif kind == "error":
            self._end_text()
            self.outcome.errors.append(f"{event.error.code}: {event.error.message}")
            self._console.print(
                f"[red]error {escape(event.error.code)}:[/] {escape(event.error.message)}"
            )
        elif kind == "final":
            self._end_text()
            final = event.final
            self.outcome.status = final.status
            self.outcome.grounded = final.grounded
            self.outcome.message = final.message
            style = "green" if final.status == answer_pb2.FINAL_STATUS_FINISHED else "red"
            grounded = "grounded in the cited code" if final.grounded else "not grounded"
            self._console.print(
                f"[{style}]{final_label(final.status)}[/] ({grounded})"
                + (f": {escape(final.message)}" if final.message else "")
            )

    def finish(self) -> None:
        self._end_text()


async def print_answer(events: AsyncIterable[gateway_pb2.AskEvent], console: Console) -> AskOutcome:
    printer = AnswerPrinter(console)
    try:
        async for event in events:
            printer.handle(event)
    finally:
        printer.finish()
    return printer.outcome
