"""``locus locbench-rank``: the locbench harness's ranker protocol over a running stack (one JSON
query on stdin, ranked files and functions on stdout)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from locus.cli.command_options import GatewayOption, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.locbench import parse_query, rank_instance


def locbench_rank(
    project_prefix: Annotated[
        str, typer.Option(help="Projects are named PREFIX-owner-name, one per repository.")
    ] = "locbench",
    project_per_commit: Annotated[
        bool,
        typer.Option(
            "--project-per-commit",
            help="One project per commit instead of per repository: a rerun finds every "
            "commit indexed already (for comparing rankings), at the cost of full scans.",
        ),
    ] = False,
    scan_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds the incremental scan may take.")
    ] = 3600.0,
    searchable_only: Annotated[
        bool,
        typer.Option(
            "--searchable-only",
            help="Ask as soon as the scan is searchable, without waiting for its vectors "
            "(what users get in the first minutes).",
        ),
    ] = False,
    timings: Annotated[
        Path | None,
        typer.Option(help="Append one JSON line of scan and Locate timings per instance here."),
    ] = None,
    dump_candidates: Annotated[
        Path | None,
        typer.Option(
            help="Write the candidates Locate ranked to DIR/<instance>.json.gz (the learned "
            "ranker's training material, bench/ranker)."
        ),
    ] = None,
    gateway: GatewayOption = None,
) -> None:
    """The locbench ranker protocol: a JSON query on stdin, ranked files and functions on stdout.

    Registers the repository once, scans it incrementally at the checked-out commit, waits, and
    asks Locate with the problem statement (`locbench.py eval --ranker-cmd 'locus locbench-rank'`).
    """

    async def body(context: CommandContext) -> int:
        query = parse_query(sys.stdin.read())
        async with context.client() as client:
            result = await rank_instance(
                client,
                query,
                project_prefix=project_prefix,
                scan_timeout_seconds=scan_timeout,
                per_commit=project_per_commit,
                embedded=not searchable_only,
                candidates_dir=dump_candidates,
            )
        sys.stdout.write(json.dumps(result.output) + "\n")
        sys.stdout.flush()
        context.err.print(json.dumps(result.timing), style="dim", highlight=False)
        if timings is not None:
            with timings.open("a", encoding="utf-8") as log_file:
                log_file.write(json.dumps(result.timing) + "\n")
        return ExitCode.OK

    finish(run_command("locbench-rank", body, gateway=gateway))
