"""``locus project create|list|delete``, ``locus source add|list`` and ``locus scan``: projects,
their sources, and scanning them."""

from __future__ import annotations

import os
import time
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.exit_codes import ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import (
    project_json,
    scan_elapsed_seconds,
    scan_json,
    source_json,
)
from locus.cli.scan_progress import follow_scan, state_label
from locus.cli.source_input import duration_seconds, is_git_url
from locus.cli.terminal_output import (
    make_console,
    print_json,
    print_scan_summary,
    projects_table,
    sources_table,
)
from locus.v1 import ingestion_pb2


def project_create(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Letters, digits, '.', '_', '-'.")],
    system: Annotated[str, typer.Option(help="The system the project belongs to.")] = "",
    subsystem: Annotated[str, typer.Option(help="Its subsystem.")] = "",
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Create a project."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            project = await client.create_project(
                ingestion_pb2.CreateProjectRequest(name=name, system=system, subsystem=subsystem)
            )
        if json_output:
            print_json(context.out, project_json(project))
        else:
            context.out.print(
                f"created project [bold]{escape(project.name)}[/] ({project.project_id}); "
                f"next: locus source add {escape(project.name)} PATH"
            )
        return ExitCode.OK

    finish(run_command("project create", body, gateway=gateway))


def project_list(gateway: GatewayOption = None, json_output: JsonOption = False) -> None:
    """List the projects."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            projects = await client.list_projects()
        if json_output:
            print_json(context.out, {"projects": [project_json(p) for p in projects]})
        elif projects:
            context.out.print(projects_table(projects))
        else:
            context.out.print("no project yet; create one with `locus project create NAME`")
        return ExitCode.OK

    finish(run_command("project list", body, gateway=gateway))


def project_delete(
    project: ProjectArgument,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Delete a project and everything it produced in every service (admin on the project).
    Refused while a scan of it runs; the other services retract it shortly after."""
    if not yes and not typer.confirm(
        f"Delete project {project!r}, its sources, files and every index entry?", default=False
    ):
        make_console(stderr=True).print("not deleted")
        finish(ExitCode.USAGE)

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            deleted = await client.delete_project(project)
        if json_output:
            print_json(
                context.out,
                {
                    "project_id": deleted.project_id,
                    "name": deleted.name,
                    "files_deleted": deleted.files_deleted,
                    "sources_deleted": deleted.sources_deleted,
                },
            )
        else:
            context.out.print(
                f"deleted project [bold]{escape(deleted.name)}[/] ({deleted.project_id}): "
                f"{deleted.sources_deleted} sources, {deleted.files_deleted} files; ast, "
                "retrieval and impact retract it in the background"
            )
        return ExitCode.OK

    finish(run_command("project delete", body, gateway=gateway))


def source_add(
    project: ProjectArgument,
    path: Annotated[
        str,
        typer.Argument(
            metavar="PATH_OR_URL",
            help="A local directory inside an allowed base, or a git repository URL "
            "(https://, ssh://, git://, file:// or user@host:path).",
        ),
    ],
    ref: Annotated[
        str,
        typer.Option("--ref", help="Git sources: the branch, tag or commit (default: HEAD)."),
    ] = "",
    poll: Annotated[
        str,
        typer.Option(
            "--poll",
            help="Git sources: fetch the ref this often (90, 30s, 5m, 1h) and scan it "
            "when it moved.",
        ),
    ] = "",
    token_file: Annotated[
        str,
        typer.Option(
            "--token-file",
            help="Git sources: a file holding the token (or user:token, or an ssh key for "
            "ssh URLs), under the service's LOCUS_INGESTION_CREDENTIAL_BASES.",
        ),
    ] = "",
    token_env: Annotated[
        str,
        typer.Option(
            "--token-env",
            help="Git sources: the ingestion service's environment variable holding the token "
            "(its name starts with LOCUS_GIT_TOKEN).",
        ),
    ] = "",
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Add a local directory or a git repository (URL + ref) to a project."""
    git_url = path.strip() if is_git_url(path.strip()) else ""
    if git_url:
        try:
            poll_seconds = duration_seconds(poll) if poll else 0
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--poll") from None
        request = ingestion_pb2.AddSourceRequest(
            project_id=project,
            git_url=git_url,
            git_ref=ref,
            # The service reads the file: send an absolute path.
            credential_file=os.path.abspath(os.path.expanduser(token_file)) if token_file else "",
            credential_env=token_env,
            poll_seconds=poll_seconds,
        )
    else:
        if ref or poll or token_file or token_env:
            raise typer.BadParameter(
                "--ref, --poll, --token-file and --token-env belong to a git URL",
                param_hint="PATH_OR_URL",
            )
        # The services resolve paths against their own working directory: send an absolute one.
        absolute = os.path.abspath(os.path.expanduser(path)) if path.strip() else path
        request = ingestion_pb2.AddSourceRequest(project_id=project, path=absolute)

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            source = await client.add_source(request)
        if json_output:
            print_json(context.out, source_json(source))
        else:
            where = source.path or f"{source.git_url} at {source.git_ref or 'HEAD'}"
            context.out.print(
                f"added {escape(where)} to {escape(project)} ({source.source_id}); "
                f"next: locus scan {escape(project)} --wait"
            )
        return ExitCode.OK

    finish(run_command("source add", body, gateway=gateway))


def source_list(
    project: ProjectArgument, gateway: GatewayOption = None, json_output: JsonOption = False
) -> None:
    """List the sources of a project."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            sources = await client.list_sources(project)
        if json_output:
            print_json(context.out, {"sources": [source_json(s) for s in sources]})
        elif sources:
            context.out.print(sources_table(sources))
        else:
            context.out.print(f"{escape(project)} has no source; add one with `locus source add`")
        return ExitCode.OK

    finish(run_command("source list", body, gateway=gateway))


def scan(
    project: ProjectArgument,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the scan until its files are searchable.")
    ] = False,
    embedded: Annotated[
        bool,
        typer.Option("--embedded", help="With --wait: follow it until their vectors are in too."),
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            min=0,
            help="With --wait: stop following after this many seconds (0: never); the scan "
            "goes on in the background.",
        ),
    ] = 3600.0,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Scan a project's sources: changed files are parsed and indexed (searchable at once,
    vectors in the background)."""

    async def body(context: CommandContext) -> int:
        started = time.monotonic()
        async with context.client() as client:
            job = await client.start_scan(project)
            if not wait:
                if json_output:
                    print_json(context.out, scan_json(job))
                else:
                    context.out.print(
                        f"scan {job.job_id} of {escape(project)} is {state_label(job)}; "
                        "`--wait` follows one to the end"
                    )
                return ExitCode.OK
            job = await follow_scan(
                client,
                job,
                context.err,
                show_progress=not json_output,
                timeout_seconds=timeout,
                embedded=embedded,
            )
        elapsed = scan_elapsed_seconds(job, time.monotonic() - started)
        if json_output:
            print_json(context.out, scan_json(job, elapsed))
        else:
            print_scan_summary(context.out, job, elapsed)
        failed = job.state == ingestion_pb2.SCAN_STATE_FAILED
        return ExitCode.FAILED if failed else ExitCode.OK

    finish(run_command("scan", body, gateway=gateway))
