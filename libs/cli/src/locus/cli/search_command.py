"""``locus search PROJECT QUERY``: the project's code chunks that match a query, by BM25, vector
similarity or both fused (Gateway.Search), best first; plain or ``--json``."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import search_json
from locus.cli.terminal_output import nothing_found_hint, print_json, print_search_hits
from locus.v1 import retrieval_pb2


class SearchModeChoice(StrEnum):
    bm25 = "bm25"
    vector = "vector"
    hybrid = "hybrid"

    @property
    def proto_name(self) -> str:
        return f"SEARCH_MODE_{self.value.upper()}"


def _non_empty(value: str) -> str:
    if not value.strip():
        raise typer.BadParameter("must not be empty")
    return value


def search(
    project: ProjectArgument,
    query: Annotated[
        str,
        typer.Argument(metavar="QUERY", help="Words or a question to match.", callback=_non_empty),
    ],
    mode: Annotated[
        SearchModeChoice,
        typer.Option(help="bm25 (words), vector (meaning) or hybrid (both, fused by rank)."),
    ] = SearchModeChoice.hybrid,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many chunks.")] = 10,
    path: Annotated[str, typer.Option(help="Only under this path prefix.")] = "",
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Search a project's code chunks (retrieval only: `locate` ranks files and symbols)."""

    async def body(context: CommandContext) -> int:
        request = retrieval_pb2.SearchRequest(
            query=query,
            mode=mode.proto_name,
            top_k=limit,
            filters=retrieval_pb2.SearchFilters(project_id=project, path_prefix=path),
        )
        async with context.client() as client:
            reply = await client.search(request)
            scanned = not reply.hits and not json_output and await client.is_scanned(project)
        if json_output:
            print_json(context.out, search_json(project, query, context.request_id, reply))
        elif reply.hits:
            print_search_hits(context.out, reply)
            context.out.print(f"request id: {context.request_id}", style="dim")
        else:
            context.out.print(
                nothing_found_hint(
                    f"no chunk matches '{escape(query)}'", project, path, scanned=scanned
                )
            )
            if mode is SearchModeChoice.vector:
                context.out.print(
                    "--mode vector searches embedded chunks only: vectors come after a scan "
                    f"(locus scan {escape(project)} --wait --embedded) from a retrieval service "
                    "whose vectors lane is on"
                )
        return ExitCode.OK

    finish(run_command("search", body, gateway=gateway))
