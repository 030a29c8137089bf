"""``locus mcp``: the Locus MCP server on stdin/stdout for a coding agent (``python -m
locus.mcp --stdio`` in this process's place), wired to the running stack's gateway (or
``--gateway``) and calling with the caller's credential, as every CLI command does:
LOCUS_API_KEY, else LOCUS_API_KEY_FILE, else the running stack's admin key file."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import NoReturn

import typer

from locus.cli.caller_credential import KEY_FILE_VARIABLE, KEY_VARIABLE
from locus.cli.command_options import GatewayOption
from locus.cli.exit_codes import START_HINT, ExitCode
from locus.cli.invocation import TRACES_FILE_VARIABLE
from locus.cli.stack_state import find_running_stack


def mcp(
    gateway: GatewayOption = None,
) -> None:
    """Serve the Locus tools to a coding agent over MCP (stdio): locate, search, find_symbols,
    get_symbol, read_file, impact, ask, list_projects."""
    if importlib.util.find_spec("locus.mcp") is None:
        _fail("the MCP server (locus-mcp) is not installed here; run `make setup`", ExitCode.USAGE)
    environment = dict(os.environ)
    stack = find_running_stack()
    address = gateway or (stack.address_of("gateway") if stack is not None else None)
    if not address:
        _fail(f"no gateway to serve: {START_HINT}, or pass --gateway", ExitCode.UNAVAILABLE)
    environment["LOCUS_MCP_GATEWAY_ADDR"] = str(address)
    own_credential = (
        environment.get(KEY_VARIABLE, "").strip() or environment.get(KEY_FILE_VARIABLE, "").strip()
    )
    if not own_credential and not gateway and stack is not None and stack.admin_key_file:
        environment[KEY_FILE_VARIABLE] = stack.admin_key_file  # the path, never the key
    if stack is not None and stack.traces_file and TRACES_FILE_VARIABLE not in environment:
        environment[TRACES_FILE_VARIABLE] = stack.traces_file
    command = [sys.executable, "-m", "locus.mcp", "--stdio"]
    os.execve(sys.executable, command, environment)


def _fail(message: str, code: ExitCode) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
