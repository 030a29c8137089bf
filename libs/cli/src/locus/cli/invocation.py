"""How every client command runs: a fresh request ID in baggage, a root span that the gRPC calls
continue (so one trace starts at the CLI), the stack found from its state file, and failures
turned into a message and an exit code instead of a traceback."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc
from rich.console import Console
from rich.markup import escape

from locus.cli.caller_credential import caller_credential
from locus.cli.client import Endpoints, LocusClient
from locus.cli.exit_codes import CliError, ExitCode, describe_rpc_error, exit_code_for
from locus.cli.stack_credentials import mesh_credentials
from locus.cli.stack_state import StackState, find_running_stack, require_running_stack
from locus.cli.terminal_output import make_console
from locus.telemetry import (
    REQUEST_ID_HEADER,
    Telemetry,
    new_request_id,
    setup_telemetry,
    with_request_id,
)

TRACES_FILE_VARIABLE = "LOCUS_TRACES_FILE"


@dataclass
class CommandContext:
    request_id: str
    telemetry: Telemetry
    stack: StackState | None
    gateway_override: str | None
    out: Console
    err: Console

    def endpoints(self) -> Endpoints:
        if self.gateway_override:
            return Endpoints(gateway=self.gateway_override)
        stack = self.stack or require_running_stack()
        return Endpoints(
            gateway=stack.address_of("gateway"),
            ingestion=stack.address_of("ingestion"),
            ast=stack.address_of("ast"),
        )

    def client(self) -> LocusClient:
        """A client of the stack, with its credentials: the caller's API key or token
        (caller_credential.py) for the gateway, and the stack's mesh credentials (none for a
        --gateway of elsewhere)."""
        if self.gateway_override:
            credential = caller_credential(self.stack, elsewhere=True)
            return LocusClient(self.endpoints(), self.telemetry, credential=credential)
        stack = self.stack or require_running_stack()
        mesh = mesh_credentials(stack.service_token_file)
        credential = caller_credential(stack, elsewhere=False)
        return LocusClient(self.endpoints(), self.telemetry, mesh=mesh, credential=credential)


CommandBody = Callable[[CommandContext], Awaitable[int]]


def answered_by_a_service(error: grpc.RpcError) -> bool:
    """Locus services return the request ID in their initial metadata; a call that never
    reached one (nothing listening) has none."""
    metadata = error.initial_metadata() if hasattr(error, "initial_metadata") else None
    return any(key == REQUEST_ID_HEADER for key, _ in (metadata or ()))


def print_error(err: Console, message: str) -> None:
    first, _, rest = message.partition("\n")
    err.print(f"[bold red]error:[/] {escape(first)}", soft_wrap=True)
    if rest:
        err.print(escape(rest), style="dim", soft_wrap=True)


def run_command(name: str, body: CommandBody, *, gateway: str | None = None) -> int:
    """Run ``body`` inside the root span of ``locus <name>``; return the exit code."""
    request_id = new_request_id()
    err = make_console(stderr=True)
    stack = find_running_stack()
    if stack is not None and stack.traces_file and TRACES_FILE_VARIABLE not in os.environ:
        # The CLI's spans go where the stack's go, so one file holds whole traces.
        os.environ[TRACES_FILE_VARIABLE] = stack.traces_file
    telemetry = setup_telemetry("cli")
    context = CommandContext(request_id, telemetry, stack, gateway or None, make_console(), err)

    async def traced() -> int:
        with (
            with_request_id(request_id),
            telemetry.tracer("locus.cli").start_as_current_span(
                f"locus {name}", attributes={"locus.cli.command": name}
            ),
        ):
            return await body(context)

    try:
        return asyncio.run(traced())
    except KeyboardInterrupt:
        err.print(f"cancelled (request id: {request_id})", style="yellow")
        return ExitCode.INTERRUPTED
    except grpc.RpcError as error:
        status = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        details = error.details() if hasattr(error, "details") else str(error)
        described = describe_rpc_error(
            status, details, request_id, from_server=answered_by_a_service(error)
        )
        print_error(err, described)
        return exit_code_for(status)
    except CliError as error:
        print_error(err, f"{error.message}\nrequest id: {request_id}")
        return error.exit_code
    finally:
        telemetry.shutdown()
