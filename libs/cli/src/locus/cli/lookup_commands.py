"""One object of the Gateway API by its id or name: ``locus project get PROJECT`` (GetProject),
``locus scan-status JOB_ID`` (GetScan) and ``locus node NODE_ID`` (GetAstNode); each plain or
``--json``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import (
    node_json,
    project_json,
    scan_elapsed_seconds,
    scan_json,
    timestamp_datetime,
    timestamp_text,
)
from locus.cli.terminal_output import print_json, print_node, print_scan_summary, projects_table
from locus.v1 import ast_pb2, ingestion_pb2


def project_get(
    project: ProjectArgument,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show one project: its id, system, creation time and latest snapshot."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            found = await client.get_project(project)
        if json_output:
            print_json(context.out, project_json(found))
        else:
            context.out.print(projects_table([found]))
            created = timestamp_text(found, "created_at")
            if created:
                context.out.print(f"created {created}", style="dim")
        return ExitCode.OK

    finish(run_command("project get", body, gateway=gateway))


def _running_seconds(job: ingestion_pb2.ScanJob) -> float:
    """How long an unfinished job has run (server clock at creation, this one now)."""
    created = timestamp_datetime(job, "created_at")
    if created is None:
        return 0.0
    return max(0.0, (datetime.now(UTC).replace(tzinfo=None) - created).total_seconds())


def scan_status(
    job_id: Annotated[
        str,
        typer.Argument(metavar="JOB_ID", help="A scan job id (what `locus scan` prints)."),
    ],
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show a scan job: its state, file counts and throughput. Exits 1 when the scan failed;
    `locus scan PROJECT --wait` follows a new one to the end."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            job = await client.get_scan(job_id)
        elapsed = scan_elapsed_seconds(job, _running_seconds(job))
        if json_output:
            print_json(context.out, scan_json(job, elapsed))
        else:
            print_scan_summary(context.out, job, elapsed)
            if job.pending_stages:
                context.out.print(
                    f"  waiting for {escape(', '.join(job.pending_stages))}", style="dim"
                )
        return ExitCode.FAILED if job.state == ingestion_pb2.SCAN_STATE_FAILED else ExitCode.OK

    finish(run_command("scan-status", body, gateway=gateway))


def node(
    node_id: Annotated[
        str,
        typer.Argument(
            metavar="NODE_ID", help="A symbol's node id (`locus symbols --json` lists them)."
        ),
    ],
    relations: Annotated[
        bool,
        typer.Option("--relations", help="Also list what it calls, imports, inherits and uses."),
    ] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show one symbol by node id: its location, signature, children and (--relations) the
    relations each way."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            reply = await client.get_ast_node(
                ast_pb2.GetNodeRequest(node_id=node_id.strip(), include_relations=relations)
            )
        if json_output:
            print_json(context.out, node_json(reply))
        else:
            print_node(context.out, reply)
        return ExitCode.OK

    finish(run_command("node", body, gateway=gateway))
