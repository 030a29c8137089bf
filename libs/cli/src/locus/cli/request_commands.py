"""``locus requests``, ``locus request show ID`` and ``locus feedback [add] ID RATING | list``:
past requests and their outcome, one recorded request with everything the request log keeps
(retrieved chunks, context, citations, timings, feedback), and the feedback on your own
requests (everyone's for a system admin)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from locus.cli.command_options import GatewayOption, JsonOption, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import feedback_json, line_span, request_detail_json, request_json
from locus.cli.terminal_output import print_json, requests_table
from locus.v1 import common_pb2, gateway_pb2

RequestIdArgument = Annotated[
    str, typer.Argument(metavar="REQUEST_ID", help="From `locus ask` or `locus requests`.")
]


class _AddByDefault(TyperGroup):
    """``locus feedback ID RATING`` (what ``locus ask`` suggests) means ``locus feedback add``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # a typer (click) Context
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["add", *args]
        return super().parse_args(ctx, args)


request_app = typer.Typer(help="Show one recorded request.", no_args_is_help=True)
feedback_app = typer.Typer(
    cls=_AddByDefault,
    help="Rate the answer to a request, or list the feedback given.",
    no_args_is_help=True,
)


@request_app.command("show")
def request_show(
    request_id: RequestIdArgument, gateway: GatewayOption = None, json_output: JsonOption = False
) -> None:
    """A request with its retrieved chunks, context, citations, timings and feedback."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            record = await client.get_request(request_id)
        if json_output:
            print_json(context.out, request_detail_json(record))
            return ExitCode.OK
        out = context.out
        out.print(
            f"[bold]{escape(record.request_id)}[/] {escape(record.kind)} "
            f"{escape(record.status)} in {record.latency_ms} ms, "
            f"project {escape(record.project_name or record.project_id or record.project_ref)}, "
            f"by {escape(record.principal or 'unknown')}"
        )
        out.print(f"question: {escape(record.question)}")
        if record.error_code:
            out.print(f"[red]{escape(record.error_code)}:[/] {escape(record.error_message)}")
        if record.answer_text:
            out.print("[bold]answer[/]")
            out.print(record.answer_text, markup=False, highlight=False)
        for citation in record.citations:
            location = citation.location
            span = line_span(location.relative_path, location.start_line, location.end_line)
            out.print(f"  [{escape(citation.citation_id)}] {escape(span)}")
        if record.context:
            out.print(f"[bold]context[/] ({len(record.context)} snippets)")
            for snippet in record.context:
                location = snippet.chunk.location
                span = line_span(location.relative_path, location.start_line, location.end_line)
                out.print(
                    f"  {escape(snippet.citation_id)} {escape(span)} "
                    f"[dim]{escape(snippet.symbol_qualified_name)} {snippet.score:.3f}[/]"
                )
        out.print(f"[bold]retrieved[/] {len(record.retrieved)} chunks")
        if record.timings_ms:
            timings = ", ".join(f"{k} {v:g} ms" for k, v in sorted(record.timings_ms.items()))
            out.print(f"timings: {escape(timings)}", style="dim")
        if record.notes:
            out.print(f"notes: {escape(record.notes)}", style="dim")
        for feedback in record.feedback:
            out.print(f"feedback {feedback.rating}/5 {escape(feedback.comment)}")
        out.print(f"trace id: {record.trace_id or '-'}", style="dim")
        return ExitCode.OK

    finish(run_command("request show", body, gateway=gateway))


@feedback_app.command("add")
def feedback_add(
    request_id: RequestIdArgument,
    rating: Annotated[
        int, typer.Argument(metavar="RATING", min=1, max=5, help="1 (useless) to 5 (spot on).")
    ],
    comment: Annotated[str, typer.Option(help="What was right or wrong.")] = "",
    gateway: GatewayOption = None,
) -> None:
    """Rate the answer to a request (`locus feedback ID RATING` for short)."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            reply = await client.record_feedback(
                gateway_pb2.RecordFeedbackRequest(
                    request_id=request_id, rating=rating, comment=comment
                )
            )
        context.out.print(f"feedback {reply.feedback_id} recorded for {escape(request_id)}")
        return ExitCode.OK

    finish(run_command("feedback", body, gateway=gateway))


@feedback_app.command("list")
def feedback_list(
    request: Annotated[str, typer.Option("--request", help="Only on this request.")] = "",
    project: Annotated[str, typer.Option("--project", help="Only on this project's.")] = "",
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many.")] = 100,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """List the feedback on your requests, newest first (a system admin sees everyone's)."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            found = await client.list_feedback(
                gateway_pb2.ListFeedbackRequest(
                    request_id=request,
                    project_id=project,
                    page=common_pb2.PageRequest(page_size=min(limit, 500)),
                ),
                limit=limit,
            )
        if json_output:
            print_json(context.out, {"feedback": [feedback_json(f) for f in found]})
        elif found:
            table = Table("feedback id", "request id", "rating", "given", "comment")
            for feedback in found:
                given = feedback.created_at.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
                table.add_row(
                    feedback.feedback_id,
                    escape(feedback.request_id),
                    str(feedback.rating),
                    given,
                    escape(feedback.comment),
                )
            context.out.print(table)
        else:
            context.out.print("no feedback yet; rate an answer with `locus feedback ID RATING`")
        return ExitCode.OK

    finish(run_command("feedback list", body, gateway=gateway))


def requests(
    project: Annotated[
        str, typer.Argument(metavar="[PROJECT]", help="Only this project's requests.")
    ] = "",
    status: Annotated[str, typer.Option(help="Only requests with this status.")] = "",
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Page size.")] = 100,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """List past requests (questions and locates) and their outcome."""

    async def body(context: CommandContext) -> int:
        request = gateway_pb2.ListRequestsRequest(
            project_id=project, status=status, page=common_pb2.PageRequest(page_size=limit)
        )
        async with context.client() as client:
            records = await client.list_requests(request)
        if json_output:
            print_json(context.out, {"requests": [request_json(r) for r in records]})
        elif records:
            context.out.print(requests_table(records))
        else:
            context.out.print("no requests yet")
        return ExitCode.OK

    finish(run_command("requests", body, gateway=gateway))
