"""``locus up``, ``down``, ``status`` and ``migrate``: the local stack's processes and stores."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from locus.cli.command_options import GatewayOption, JsonOption, finish
from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.invocation import CommandContext, print_error, run_command
from locus.cli.local_stack import (
    UpOptions,
    installed_services,
    parse_service_list,
    run_up,
    select_services,
)
from locus.cli.schema_migrations import migrate_stores, stores_to_migrate
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
    status_table,
)


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
