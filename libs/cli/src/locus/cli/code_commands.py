"""``locus read PROJECT PATH[:START-END]`` and ``locus outline PROJECT PATH``: a scanned file's
numbered lines and its symbols, through the gateway (reader on the project)."""

from __future__ import annotations

import re
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import outline_json, read_file_json
from locus.cli.terminal_output import print_code_block, print_json, symbols_table
from locus.v1 import ast_pb2, gateway_pb2

# "path:14" or "path:14-20" at the end of PATH; anything else is part of the path.
_LINE_SPAN = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")


def parse_path_span(text: str) -> tuple[str, int, int]:
    """``src/app.py:14-20`` → (``src/app.py``, 14, 20); ``src/app.py:14`` → one line;
    ``src/app.py`` → (path, 0, 0): the whole file (up to the server's cap)."""
    match = _LINE_SPAN.match(text.strip())
    if match is None:
        return text.strip(), 0, 0
    start = int(match["start"])
    end = int(match["end"]) if match["end"] else start
    if start < 1 or end < start:
        raise typer.BadParameter(
            f"{text!r}: lines are START-END with 1 ≤ START ≤ END", param_hint="PATH[:START-END]"
        )
    return match["path"], start, end


def read(
    project: ProjectArgument,
    path: Annotated[
        str,
        typer.Argument(
            metavar="PATH[:START-END]",
            help="A file as scanned (relative to its source root), optionally with lines.",
        ),
    ],
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print a scanned file's numbered lines (at most 2,000 lines per call)."""
    relative_path, start, end = parse_path_span(path)

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            reply = await client.read_file(
                gateway_pb2.ReadFileRequest(
                    project_id=project,
                    relative_path=relative_path,
                    start_line=start,
                    end_line=end,
                )
            )
        if json_output:
            print_json(context.out, read_file_json(reply))
            return ExitCode.OK
        print_code_block(context.out, reply.relative_path, reply.lines, reply.language)
        context.out.print(
            f"{reply.total_lines} lines, {escape(reply.language or 'unknown language')}, "
            f"snapshot {reply.snapshot_id}",
            style="dim",
        )
        return ExitCode.OK

    finish(run_command("read", body, gateway=gateway))


def outline(
    project: ProjectArgument,
    path: Annotated[
        str, typer.Argument(metavar="PATH", help="A file as scanned (relative to its root).")
    ],
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """List a scanned file's symbols (source order) and what it imports."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            reply = await client.get_file_outline(
                ast_pb2.GetFileOutlineRequest(project_id=project, relative_path=path.strip())
            )
        if json_output:
            print_json(context.out, outline_json(path.strip(), reply))
            return ExitCode.OK
        if reply.symbols:
            context.out.print(symbols_table(reply.symbols))
        else:
            context.out.print(f"{escape(path)} has no symbols")
        for dependency in reply.dependencies:
            context.out.print(
                f"imports {escape(dependency.target_module)} (line {dependency.line})",
                style="dim",
            )
        if reply.parse_errors:
            context.out.print(
                f"{escape(path)} parsed with {reply.parse_errors} syntax error(s): definitions "
                "inside the broken parts may be missing (the file is searchable as text)",
                style="yellow",
            )
        return ExitCode.OK

    finish(run_command("outline", body, gateway=gateway))
