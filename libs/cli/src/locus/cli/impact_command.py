"""``locus impact PROJECT SYMBOL``: what a change to one symbol touches (its callers, callees and
dependents, each with the chain of relations that reaches it), through the Gateway's
ComputeImpact; the symbol named as a developer writes it (or by node id)."""

from __future__ import annotations

import re
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.client import LocusClient
from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import impact_json
from locus.cli.terminal_output import print_impact, print_json
from locus.v1 import ast_pb2, common_pb2, impact_pb2

_NODE_ID = re.compile(r"n_[0-9a-f]{32}")
# A later overload's qualified name ends with its parameter list: `…readValue(String s)`.
_PARAMETERS = re.compile(r"\(.*\)$")
_SHOWN_CANDIDATES = 10


async def impact_seeds(client: LocusClient, project: str, symbol: str) -> list[str]:
    """The node ids ``symbol`` names: a node id itself; else the symbols FindSymbols matches
    exactly (by name, qualified name or its end; all overloads of one method together; a
    definition before the signatures of the same name).
    Several different symbols, or none, are a usage error that lists what to write instead."""
    if _NODE_ID.fullmatch(symbol):
        return [symbol]
    found = await client.find_symbols(
        ast_pb2.FindSymbolsRequest(
            project_id=project,
            name=symbol,
            exact=True,
            exact_name_end=True,
            page=common_pb2.PageRequest(page_size=50),
        )
    )
    exact = list(found.symbols)
    # A method and the interface's signature it implements share a name (`reserve`), a C
    # function and its prototype a qualified name: the definition is meant (its impact
    # reaches the declaration, and the signature's callers through it: overrides).
    definitions = [s for s in exact if s.kind != common_pb2.SYMBOL_KIND_SIGNATURE]
    for named in (definitions, exact):
        if named and len({_PARAMETERS.sub("", s.qualified_name) for s in named}) == 1:
            return [s.node_id for s in named]
    if exact:
        names = sorted({s.qualified_name for s in exact})
        raise CliError(
            f"'{symbol}' names {len(names)} symbols; give one's qualified name (or node id): "
            + ", ".join(names[:_SHOWN_CANDIDATES])
            + (" …" if len(names) > _SHOWN_CANDIDATES else ""),
            ExitCode.USAGE,
        )
    near = await client.find_symbols(
        ast_pb2.FindSymbolsRequest(
            project_id=project, name=symbol, page=common_pb2.PageRequest(page_size=5)
        )
    )
    if near.symbols:
        hint = "; did you mean " + ", ".join(s.qualified_name for s in near.symbols) + "?"
    elif await client.is_scanned(project):
        hint = f" in {project}, which is scanned; `locus symbols {project} PART` lists names"
    else:
        hint = f"; is {project} scanned? (locus scan {project} --wait)"
    raise CliError(f"no symbol is named '{symbol}' exactly{hint}", ExitCode.USAGE)


def impact(
    project: ProjectArgument,
    symbol: Annotated[
        str,
        typer.Argument(
            metavar="SYMBOL",
            help="A symbol's name or qualified name as written (`shop.payments.charge_card`, "
            "`(*Server).Serve`, `XmlMapper#readValue`), or its node id.",
        ),
    ],
    depth: Annotated[int, typer.Option(min=1, max=5, help="How many relations away to walk.")] = 2,
    limit: Annotated[
        int, typer.Option(min=1, max=500, help="At most this many symbols and files.")
    ] = 30,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """What a change to one symbol touches: its callers, callees and dependents, nearest first,
    each with the chain of relations that reaches it."""
    if not symbol.strip():
        raise typer.BadParameter("must not be empty", param_hint="SYMBOL")

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            seeds = await impact_seeds(client, project, symbol.strip())
            reply = await client.compute_impact(
                impact_pb2.ComputeImpactRequest(
                    project_id=project, seed_node_ids=seeds, depth=depth, limit=limit
                )
            )
        if json_output:
            print_json(context.out, {"project": project, "seeds": seeds, **impact_json(reply)})
        elif reply.symbols or reply.files:
            print_impact(context.out, reply)
        else:
            context.out.print(f"nothing within {depth} relations of '{escape(symbol)}'")
        return ExitCode.OK

    finish(run_command("impact", body, gateway=gateway))
