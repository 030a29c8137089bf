"""The ``locus`` command: ``locus up`` runs the stack; every other command talks to it through the
Gateway API (see client.py). Read commands take ``--json`` for scripts."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.answer_stream import print_answer
from locus.cli.code_commands import outline, read
from locus.cli.command_options import GatewayOption, JsonOption, ProjectArgument, finish
from locus.cli.dead_letter_commands import dlq_app
from locus.cli.docs_commands import docs_app
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, print_error, run_command
from locus.cli.json_output import (
    locate_json,
    project_json,
    request_json,
    scan_elapsed_seconds,
    scan_json,
    source_json,
    symbol_json,
)
from locus.cli.key_commands import keys_app
from locus.cli.local_stack import (
    UpOptions,
    installed_services,
    parse_service_list,
    run_up,
    select_services,
)
from locus.cli.locbench import parse_query, rank_instance
from locus.cli.lookup_commands import node, project_get, scan_status
from locus.cli.mcp_command import mcp
from locus.cli.question_scope import (
    ProjectOrQuestionArgument,
    QuestionArgument,
    ScopeProjectsOption,
    SubsystemOption,
    SystemOption,
    question_target,
)
from locus.cli.registry_commands import (
    project_move,
    project_rename,
    source_notify,
    source_remove,
    subsystem_app,
    system_app,
)
from locus.cli.request_commands import feedback_app, request_app
from locus.cli.scan_progress import follow_scan, state_label
from locus.cli.schema_migrations import migrate_stores, stores_to_migrate
from locus.cli.search_command import search
from locus.cli.source_input import duration_seconds, is_git_url
from locus.cli.stack_state import (
    DEFAULT_DATA_DIR,
    STATE_FILE_NAME,
    find_running_stack,
    load_state,
    process_is_alive,
)
from locus.cli.stack_status import stack_health
from locus.cli.terminal_output import (
    make_console,
    print_json,
    print_located,
    print_scan_summary,
    projects_table,
    requests_table,
    sources_table,
    status_table,
    symbols_table,
)
from locus.v1 import ast_pb2, common_pb2, gateway_pb2, ingestion_pb2

app = typer.Typer(
    name="locus",
    help="Locus: find the code that answers a question. `locus up` starts the stack.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
project_app = typer.Typer(help="Create, show, list and delete projects.", no_args_is_help=True)
source_app = typer.Typer(
    help="Add and list the source directories of a project.", no_args_is_help=True
)
app.add_typer(project_app, name="project")
app.add_typer(source_app, name="source")
app.add_typer(dlq_app, name="dlq")
app.add_typer(keys_app, name="keys")
app.add_typer(request_app, name="request")
app.add_typer(feedback_app, name="feedback")
app.add_typer(docs_app, name="docs")
app.add_typer(system_app, name="system")
app.add_typer(subsystem_app, name="subsystem")
app.command("read")(read)
app.command("outline")(outline)
app.command("mcp")(mcp)
app.command("search")(search)
app.command("node")(node)
app.command("scan-status")(scan_status)
project_app.command("get")(project_get)
project_app.command("rename")(project_rename)
project_app.command("move")(project_move)
source_app.command("remove")(source_remove)
source_app.command("notify")(source_notify)


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

    @property
    def proto_name(self) -> str:
        return f"SYMBOL_KIND_{self.value.upper()}"


def _non_empty(value: str) -> str:
    if not value.strip():
        raise typer.BadParameter("must not be empty")
    return value


# the stack


@app.command()
def up(
    data_dir: Annotated[
        Path, typer.Option(help="Where the stack keeps its stores, logs and state.")
    ] = DEFAULT_DATA_DIR,
    allow_base: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-base",
            help="A directory sources may be added from (repeatable; default: the current one).",
            show_default=False,
        ),
    ] = None,
    services: Annotated[
        str | None,
        typer.Option(help="Comma-separated services to start (default: every installed one)."),
    ] = None,
    traces_file: Annotated[
        Path | None, typer.Option(help="Append every span of the stack to this JSON-lines file.")
    ] = None,
    startup_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds each service may take to become SERVING.")
    ] = 120.0,
    stop_timeout: Annotated[
        float, typer.Option(min=0, help="Seconds each process may take to stop before a kill.")
    ] = 15.0,
) -> None:
    """Start nats-server and every installed service as separate processes; Ctrl-C stops them."""
    err = make_console(stderr=True)
    try:
        bases = [base.expanduser().resolve() for base in allow_base or [Path.cwd()]]
        for base in bases:
            if not base.is_dir():
                raise CliError(f"--allow-base {base} is not a directory", ExitCode.USAGE)
        chosen = select_services(parse_service_list(services), installed_services())
        options = UpOptions(
            data_dir=data_dir.expanduser().resolve(),
            allowed_bases=bases,
            services=chosen,
            traces_file=traces_file.expanduser().resolve() if traces_file else None,
            startup_timeout=startup_timeout,
            stop_timeout=stop_timeout,
        )
        code = run_up(options)
    except CliError as error:
        print_error(err, error.message)
        code = error.exit_code
    finish(code)


@app.command()
def down(
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="Data dir of the stack to stop (default: the running stack's).", show_default=False
        ),
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds to wait for it to stop.")] = 120.0,
) -> None:
    """Stop the running stack (as Ctrl-C in its `locus up` would)."""
    err = make_console(stderr=True)
    stack = (
        load_state(data_dir.expanduser().resolve() / STATE_FILE_NAME)
        if data_dir
        else find_running_stack()
    )
    if stack is None:
        print_error(err, "no running Locus stack found")
        finish(ExitCode.UNAVAILABLE)
        return
    os.kill(stack.supervisor_pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout

    def stopping() -> bool:  # it removes its state file last, once everything has stopped
        return stack.state_file.exists() and process_is_alive(stack.supervisor_pid)

    while stopping() and time.monotonic() < deadline:
        time.sleep(0.1)
    if stopping():
        print_error(err, f"locus up (pid {stack.supervisor_pid}) is still stopping")
        finish(ExitCode.FAILED)
    make_console().print(f"stopped the stack in {stack.data_dir}")


@app.command()
def status(gateway: GatewayOption = None, json_output: JsonOption = False) -> None:
    """Health of each process of the running stack."""

    async def body(context: CommandContext) -> int:
        report = await stack_health(context)
        if json_output:
            print_json(context.out, report)
        else:
            if report["data_dir"]:
                context.out.print(
                    f"stack in {escape(report['data_dir'])} "
                    f"(locus up pid {report['supervisor_pid']}, started {report['started_at']})"
                )
            context.out.print(status_table(report["services"]))
        return ExitCode.OK if report["healthy"] else ExitCode.FAILED

    finish(run_command("status", body, gateway=gateway))


@app.command()
def migrate(
    data_dir: Annotated[
        Path,
        typer.Option(help="The stack's data dir (each store under <data-dir>/<service>)."),
    ] = DEFAULT_DATA_DIR,
    services: Annotated[
        str | None,
        typer.Option(help="Comma-separated services (default: every installed one with a store)."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Upgrade each store's schema to this version's (what services do at start unless
    LOCUS_MIGRATE_ON_START=false); the database is the one each service's settings name."""
    err = make_console(stderr=True)
    try:
        chosen = stores_to_migrate(parse_service_list(services))
    except CliError as error:
        print_error(err, error.message)
        finish(error.exit_code)
        return
    results = migrate_stores(chosen, data_dir.expanduser().resolve(), os.environ)
    if json_output:
        print_json(make_console(), [asdict(result) for result in results])
    out = make_console()
    for result in results:
        if result.error:
            print_error(err, f"{result.store}: {result.error}")
        elif not json_output:
            change = "up to date" if result.before == result.after else "migrated"
            out.print(f"{result.store}: {result.before} → {result.after} ({change})")
    finish(ExitCode.FAILED if any(result.error for result in results) else ExitCode.OK)


# projects and sources


@project_app.command("create")
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


@project_app.command("list")
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


@project_app.command("delete")
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


@source_app.command("add")
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


@source_app.command("list")
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


# scans and code


@app.command()
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


@app.command()
def symbols(
    project: ProjectArgument,
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="Part of a name or qualified name.")
    ],
    kind: Annotated[SymbolKindChoice | None, typer.Option(help="Only this kind.")] = None,
    path: Annotated[str, typer.Option(help="Only under this path prefix.")] = "",
    exact: Annotated[bool, typer.Option("--exact", help="The name must match exactly.")] = False,
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
            page=common_pb2.PageRequest(page_size=limit),
        )
        async with context.client() as client:
            reply = await client.find_symbols(request)
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
                f"no symbol matches {escape(query)!r}; is {escape(project)} scanned? "
                f"(locus scan {escape(project)} --wait)"
            )
        return ExitCode.OK

    finish(run_command("symbols", body, gateway=gateway))


@app.command()
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
            print_located(context.out, reply)
            context.out.print(f"request id: {reply.request_id or context.request_id}", style="dim")
        return ExitCode.OK

    finish(run_command("locate", body, gateway=gateway))


@app.command()
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


# requests and feedback


@app.command()
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


# benchmark


@app.command("locbench-rank")
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
