"""``locus symbols``, ``locate`` and ``ask``: questions about a scanned project (or a scope of
projects), through the gateway."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.answer_stream import print_answer
from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import (
    locate_json,
    symbol_json,
)
from locus.cli.question_scope import (
    ProjectOrQuestionArgument,
    QuestionArgument,
    ScopeProjectsOption,
    SubsystemOption,
    SystemOption,
    question_target,
)
from locus.cli.terminal_output import (
    nothing_found_hint,
    print_json,
    print_located,
    symbols_table,
)
from locus.v1 import ast_pb2, common_pb2, gateway_pb2


class SymbolKindChoice(StrEnum):
    module = "module"
    class_ = "class"
    function = "function"
    method = "method"
    interface = "interface"
    struct = "struct"
    enum = "enum"
    trait = "trait"
    namespace = "namespace"
    constructor = "constructor"
    section = "section"
    signature = "signature"
    type_alias = "type_alias"
    constant = "constant"

    @property
    def proto_name(self) -> str:
        return f"SYMBOL_KIND_{self.value.upper()}"


def symbols(
    project: ProjectArgument,
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="Part of a name or qualified name.")
    ],
    kind: Annotated[SymbolKindChoice | None, typer.Option(help="Only this kind.")] = None,
    path: Annotated[str, typer.Option(help="Only under this path prefix.")] = "",
    exact: Annotated[
        bool,
        typer.Option(
            "--exact",
            help="The name must match exactly: a name, a qualified name or its end after a "
            "separator (HandlerStack::create).",
        ),
    ] = False,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Find symbols (modules, classes, functions, methods) by name."""

    async def body(context: CommandContext) -> int:
        request = ast_pb2.FindSymbolsRequest(
            project_id=project,
            name=query,
            kind=kind.proto_name if kind else None,
            path_prefix=path,
            exact=exact,
            exact_name_end=exact,
            page=common_pb2.PageRequest(page_size=limit),
        )
        async with context.client() as client:
            reply = await client.find_symbols(request)
            scanned = not reply.symbols and not json_output and await client.is_scanned(project)
        found = list(reply.symbols)[:limit]
        if json_output:
            print_json(
                context.out,
                {
                    "project": project,
                    "query": query,
                    "symbols": [symbol_json(s) for s in found],
                    "next_page_token": reply.next_page_token,
                },
            )
        elif found:
            context.out.print(symbols_table(found))
            more = " (more: raise --limit)" if reply.next_page_token else ""
            context.out.print(f"{len(found)} symbol(s){more}", style="dim")
        else:
            context.out.print(
                nothing_found_hint(
                    f"no symbol matches '{escape(query)}'", project, path, scanned=scanned
                )
            )
        return ExitCode.OK

    finish(run_command("symbols", body, gateway=gateway))


def locate(
    project: ProjectOrQuestionArgument = None,
    question: QuestionArgument = None,
    system: SystemOption = "",
    subsystem: SubsystemOption = "",
    projects: ScopeProjectsOption = None,
    max_files: Annotated[int, typer.Option(min=1, max=100, help="At most this many files.")] = 10,
    path: Annotated[str, typer.Option(help="Only under this path prefix.")] = "",
    include_tests: Annotated[
        bool, typer.Option("--include-tests", help="Also rank test files.")
    ] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Locate the files and symbols that answer a question, with evidence and impact (in one
    project, or in every project of a scope, each file labelled with its project)."""
    target = question_target(
        project, question, projects=projects, subsystem=subsystem, system=system
    )

    async def body(context: CommandContext) -> int:
        request = gateway_pb2.LocateRequest(
            project_id=target.project,
            question=target.question,
            scope=target.scope,
            max_files=max_files,
            path_prefix=path,
            include_tests=include_tests,
        )
        async with context.client() as client:
            reply = await client.locate(request)
        if json_output:
            print_json(context.out, locate_json(reply))
        else:
            print_located(context.out, reply, path=path)
            context.out.print(f"request id: {reply.request_id or context.request_id}", style="dim")
        return ExitCode.OK

    finish(run_command("locate", body, gateway=gateway))


def ask(
    project: ProjectOrQuestionArgument = None,
    question: QuestionArgument = None,
    system: SystemOption = "",
    subsystem: SubsystemOption = "",
    projects: ScopeProjectsOption = None,
    max_context_chunks: Annotated[
        int, typer.Option(min=0, max=200, help="Code chunks given to the answer (0: default).")
    ] = 0,
    gateway: GatewayOption = None,
) -> None:
    """Ask a question: the located code, then the answer as it is written, with citations (of
    one project, or of every project of a scope)."""
    target = question_target(
        project, question, projects=projects, subsystem=subsystem, system=system
    )

    async def body(context: CommandContext) -> int:
        request = gateway_pb2.AskRequest(
            project_id=target.project,
            question=target.question,
            max_context_chunks=max_context_chunks,
            scope=target.scope,
        )
        async with context.client() as client:
            stream = client.ask(request)
            try:
                outcome = await print_answer(stream, context.out)
            finally:
                stream.cancel()  # no-op once the stream ended; on Ctrl-C it stops the answer
        request_id = outcome.request_id or context.request_id
        if outcome.status == 0:
            context.err.print("the answer stream ended without a final status", style="red")
        context.out.print(
            f"request id: {request_id} (rate it: locus feedback {request_id} 1-5)", style="dim"
        )
        return outcome.exit_code

    finish(run_command("ask", body, gateway=gateway))
