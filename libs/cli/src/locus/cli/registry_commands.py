"""The registry from the command line: ``locus system create|list|get|rename|delete``,
``locus subsystem create|list|get|rename|delete`` (``--system``), ``locus project rename|move``
and ``locus source remove|notify``. Reads for any principal; system and subsystem changes need
admin:*, a project's rename or move admin on it, removing a source or telling of a push writer on
its project."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from locus.cli.client import LocusClient
from locus.cli.command_options import GatewayOption, JsonOption, finish
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, run_command
from locus.cli.json_output import (
    JsonObject,
    project_json,
    scan_json,
    source_json,
    timestamp_text,
)
from locus.cli.scan_progress import follow_scan
from locus.cli.terminal_output import print_json
from locus.v1 import common_pb2, ingestion_pb2

MAX_PAGES = 1000
system_app = typer.Typer(
    help="Systems: the top of System -> Subsystem -> Project.", no_args_is_help=True
)
subsystem_app = typer.Typer(
    help="Subsystems of a system; projects belong to one.", no_args_is_help=True
)

SystemArgument = Annotated[
    str, typer.Argument(metavar="SYSTEM", help="System name or id.", show_default=False)
]
SubsystemArgument = Annotated[
    str,
    typer.Argument(
        metavar="SUBSYSTEM", help="Subsystem id, or its name with --system.", show_default=False
    ),
]
SystemOption = Annotated[
    str, typer.Option("--system", help="The subsystem's system (name or id).", show_default=False)
]
DescriptionOption = Annotated[
    str, typer.Option("--description", help="What it is (at most 2,000 characters).")
]


def _run(name: str, gateway: str | None, work: Callable[[Any], Awaitable[int]]) -> None:
    """Run ``work`` with the registry's stub (the gateway's, or ingestion's without one)."""

    async def body(context: CommandContext) -> int:
        async with context.client() as client:
            return await work(_Call(context, client))

    finish(run_command(name, body, gateway=gateway))


class _Call:
    def __init__(self, context: CommandContext, client: LocusClient) -> None:
        self.context = context
        self.client = client
        self.stub = client.registry_stub()

    def show(self, data: JsonObject | list[JsonObject], text: str | Table, as_json: bool) -> int:
        if as_json:
            print_json(self.context.out, data)
        else:
            self.context.out.print(text)
        return ExitCode.OK


def system_json(system: ingestion_pb2.System) -> JsonObject:
    return {
        "system_id": system.system_id,
        "name": system.name,
        "description": system.description,
        "subsystem_count": system.subsystem_count,
        "created_at": timestamp_text(system, "created_at"),
    }


def subsystem_json(subsystem: ingestion_pb2.Subsystem) -> JsonObject:
    return {
        "subsystem_id": subsystem.subsystem_id,
        "system_id": subsystem.system_id,
        "system": subsystem.system,
        "name": subsystem.name,
        "description": subsystem.description,
        "project_count": subsystem.project_count,
        "created_at": timestamp_text(subsystem, "created_at"),
    }


def _systems_table(systems: list[ingestion_pb2.System]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("name", "system id", "subsystems", "description"):
        table.add_column(column, overflow="fold")
    for s in systems:
        table.add_row(escape(s.name), s.system_id, str(s.subsystem_count), escape(s.description))
    return table


def _subsystems_table(subsystems: list[ingestion_pb2.Subsystem]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("system", "name", "subsystem id", "projects", "description"):
        table.add_column(column, overflow="fold")
    for s in subsystems:
        table.add_row(
            escape(s.system),
            escape(s.name),
            s.subsystem_id,
            str(s.project_count),
            escape(s.description),
        )
    return table


# systems


@system_app.command("create")
def system_create(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Letters, digits, '.', '_', '-'.")],
    description: DescriptionOption = "",
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Create a system (admin:*)."""

    async def work(call: _Call) -> int:
        made = await call.stub.CreateSystem(
            ingestion_pb2.CreateSystemRequest(name=name, description=description)
        )
        return call.show(
            system_json(made), f"created system {escape(made.name)} ({made.system_id})", json_output
        )

    _run("system create", gateway, work)


@system_app.command("list")
def system_list(gateway: GatewayOption = None, json_output: JsonOption = False) -> None:
    """List the systems, by name."""

    async def work(call: _Call) -> int:
        systems: list[ingestion_pb2.System] = []
        token = ""
        for _ in range(MAX_PAGES):
            reply = await call.stub.ListSystems(
                ingestion_pb2.ListSystemsRequest(page=common_pb2.PageRequest(page_token=token))
            )
            systems.extend(reply.systems)
            token = reply.next_page_token
            if not token:
                break
        text: str | Table = (
            _systems_table(systems)
            if systems
            else "no system yet; create one with `locus system create NAME`"
        )
        return call.show({"systems": [system_json(s) for s in systems]}, text, json_output)

    _run("system list", gateway, work)


@system_app.command("get")
def system_get(
    system: SystemArgument, gateway: GatewayOption = None, json_output: JsonOption = False
) -> None:
    """Show one system."""

    async def work(call: _Call) -> int:
        found = await call.stub.GetSystem(ingestion_pb2.GetSystemRequest(system_id=system))
        return call.show(system_json(found), _systems_table([found]), json_output)

    _run("system get", gateway, work)


@system_app.command("rename")
def system_rename(
    system: SystemArgument,
    new_name: Annotated[str, typer.Argument(metavar="NEW_NAME")],
    gateway: GatewayOption = None,
) -> None:
    """Rename a system (admin:*); its subsystems and projects stay in it."""

    async def work(call: _Call) -> int:
        updated = await call.stub.UpdateSystem(
            ingestion_pb2.UpdateSystemRequest(system_id=system, name=new_name)
        )
        return call.show({}, f"system {updated.system_id} is now {escape(updated.name)}", False)

    _run("system rename", gateway, work)


@system_app.command("delete")
def system_delete(system: SystemArgument, gateway: GatewayOption = None) -> None:
    """Delete an empty system (admin:*); refused while it has subsystems."""

    async def work(call: _Call) -> int:
        deleted = await call.stub.DeleteSystem(ingestion_pb2.DeleteSystemRequest(system_id=system))
        return call.show({}, f"deleted system {escape(deleted.name)} ({deleted.system_id})", False)

    _run("system delete", gateway, work)


# subsystems


@subsystem_app.command("create")
def subsystem_create(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Letters, digits, '.', '_', '-'.")],
    system: SystemOption,
    description: DescriptionOption = "",
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Create a subsystem of a system (admin:*)."""

    async def work(call: _Call) -> int:
        made = await call.stub.CreateSubsystem(
            ingestion_pb2.CreateSubsystemRequest(
                system_id=system, name=name, description=description
            )
        )
        text = f"created subsystem {escape(made.system)}/{escape(made.name)} ({made.subsystem_id})"
        return call.show(subsystem_json(made), text, json_output)

    _run("subsystem create", gateway, work)


@subsystem_app.command("list")
def subsystem_list(
    system: SystemOption = "", gateway: GatewayOption = None, json_output: JsonOption = False
) -> None:
    """List subsystems (of one system with --system), by system and name."""

    async def work(call: _Call) -> int:
        subsystems: list[ingestion_pb2.Subsystem] = []
        token = ""
        for _ in range(MAX_PAGES):
            reply = await call.stub.ListSubsystems(
                ingestion_pb2.ListSubsystemsRequest(
                    system_id=system, page=common_pb2.PageRequest(page_token=token)
                )
            )
            subsystems.extend(reply.subsystems)
            token = reply.next_page_token
            if not token:
                break
        text: str | Table = _subsystems_table(subsystems) if subsystems else "no subsystem yet"
        return call.show({"subsystems": [subsystem_json(s) for s in subsystems]}, text, json_output)

    _run("subsystem list", gateway, work)


@subsystem_app.command("get")
def subsystem_get(
    subsystem: SubsystemArgument,
    system: SystemOption = "",
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show one subsystem."""

    async def work(call: _Call) -> int:
        found = await call.stub.GetSubsystem(
            ingestion_pb2.GetSubsystemRequest(subsystem_id=subsystem, system_id=system)
        )
        return call.show(subsystem_json(found), _subsystems_table([found]), json_output)

    _run("subsystem get", gateway, work)


@subsystem_app.command("rename")
def subsystem_rename(
    subsystem: SubsystemArgument,
    new_name: Annotated[str, typer.Argument(metavar="NEW_NAME")],
    system: SystemOption = "",
    gateway: GatewayOption = None,
) -> None:
    """Rename a subsystem (admin:*); its projects stay in it."""

    async def work(call: _Call) -> int:
        updated = await call.stub.UpdateSubsystem(
            ingestion_pb2.UpdateSubsystemRequest(
                subsystem_id=subsystem, system_id=system, name=new_name
            )
        )
        where = f"{updated.system}/{updated.name}"
        text = f"subsystem {updated.subsystem_id} is now {escape(where)}"
        return call.show({}, text, False)

    _run("subsystem rename", gateway, work)


@subsystem_app.command("delete")
def subsystem_delete(
    subsystem: SubsystemArgument, system: SystemOption = "", gateway: GatewayOption = None
) -> None:
    """Delete a subsystem (admin:*); refused while projects belong to it."""

    async def work(call: _Call) -> int:
        deleted = await call.stub.DeleteSubsystem(
            ingestion_pb2.DeleteSubsystemRequest(subsystem_id=subsystem, system_id=system)
        )
        text = f"deleted subsystem {escape(deleted.system)}/{escape(deleted.name)}"
        return call.show({}, text, False)

    _run("subsystem delete", gateway, work)


# projects and sources (registered on `locus project` and `locus source` by main)


def project_rename(
    project: Annotated[str, typer.Argument(metavar="PROJECT", help="Project name or id.")],
    new_name: Annotated[str, typer.Argument(metavar="NEW_NAME")],
    gateway: GatewayOption = None,
) -> None:
    """Rename a project (admin on it); API key grants follow it (they are kept by id)."""

    async def work(call: _Call) -> int:
        updated = await call.stub.UpdateProject(
            ingestion_pb2.UpdateProjectRequest(project_id=project, name=new_name)
        )
        return call.show({}, f"project {updated.project_id} is now {escape(updated.name)}", False)

    _run("project rename", gateway, work)


def project_move(
    project: Annotated[str, typer.Argument(metavar="PROJECT", help="Project name or id.")],
    subsystem: Annotated[
        str, typer.Option("--subsystem", help="Subsystem id, or its name with --system.")
    ] = "",
    system: SystemOption = "",
    none: Annotated[bool, typer.Option("--none", help="Out of every subsystem.")] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Move a project to a subsystem (admin on the project), or out of every one (--none)."""

    async def work(call: _Call) -> int:
        if none == bool(subsystem):
            raise CliError("give --subsystem (with --system for a name) or --none", ExitCode.USAGE)
        updated = await call.stub.UpdateProject(
            ingestion_pb2.UpdateProjectRequest(
                project_id=project, subsystem_id="" if none else subsystem, system=system
            )
        )
        where = f"{updated.system}/{updated.subsystem}" if updated.subsystem_id else "no subsystem"
        text = f"project {escape(updated.name)} is in {escape(where)}"
        return call.show(project_json(updated), text, json_output)

    _run("project move", gateway, work)


def source_remove(
    source_id: Annotated[str, typer.Argument(metavar="SOURCE_ID", help="See locus source list.")],
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Return once the removal started.")
    ] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Remove a source (writer on its project): its files are retracted from every service,
    then its mirror and the source go. Refused while a scan of the project runs."""

    async def work(call: _Call) -> int:
        reply = await call.stub.RemoveSource(ingestion_pb2.RemoveSourceRequest(source_id=source_id))
        job = reply.job
        if not no_wait:
            job = await follow_scan(call.client, job, call.context.err, show_progress=False)
            if job.state == ingestion_pb2.SCAN_STATE_FAILED:
                raise CliError(f"removal job {job.job_id} failed: {job.error}", ExitCode.FAILED)
        data = {"source": source_json(reply.source), "job_id": job.job_id}
        text = (
            f"removed source {reply.source.source_id}: {job.stats.files_deleted} files retracted"
            if not no_wait
            else f"removing source {reply.source.source_id} (job {job.job_id})"
        )
        return call.show(data, text, json_output)

    _run("source remove", gateway, work)


def source_notify(
    project: Annotated[str, typer.Argument(metavar="PROJECT", help="Project id or name.")],
    source_id: Annotated[str, typer.Argument(metavar="SOURCE_ID", help="See locus source list.")],
    commit: Annotated[
        str,
        typer.Option(
            "--commit",
            help="The pushed commit (a full or short sha); default: fetch the source's ref and "
            "compare it with the last scan's.",
        ),
    ] = "",
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the scan it started until it ends.")
    ] = False,
    gateway: GatewayOption = None,
    json_output: JsonOption = False,
) -> None:
    """Tell Locus a git source was pushed to (writer on the project), as a push webhook does: a
    scan starts when the ref moved; otherwise the reply says why not."""

    async def work(call: _Call) -> int:
        reply = await call.stub.NotifyPush(
            ingestion_pb2.NotifyPushRequest(
                project_id=project, source_id=source_id, commit_sha=commit
            )
        )
        job = reply.job
        if reply.scan_started and wait:
            job = await follow_scan(call.client, job, call.context.err, show_progress=False)
            if job.state == ingestion_pb2.SCAN_STATE_FAILED:
                raise CliError(f"scan {job.job_id} failed: {job.error}", ExitCode.FAILED)
        data: JsonObject = {
            "scan_started": reply.scan_started,
            "reason": reply.reason,
            "job": scan_json(job) if reply.scan_started else None,
        }
        if not reply.scan_started:
            text = f"no scan started: {escape(reply.reason)}"
        elif wait:
            text = (
                f"scan {job.job_id} of {escape(project)}: {job.stats.files_added} added, "
                f"{job.stats.files_modified} modified, {job.stats.files_deleted} deleted"
            )
        else:
            text = f"scan {job.job_id} of {escape(project)} started; locus scan-status {job.job_id}"
        return call.show(data, text, json_output)

    _run("source notify", gateway, work)
