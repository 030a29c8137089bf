"""The options and arguments every gateway command shares (``--gateway``, ``--json``, PROJECT) and
``finish``, which turns a command's exit code into typer's exit."""

from __future__ import annotations

from typing import Annotated

import typer

GatewayOption = Annotated[
    str | None,
    typer.Option(
        "--gateway",
        envvar="LOCUS_GATEWAY_ADDR",
        help="Gateway address (host:port); default: the running stack's.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output (stable keys).")]
ProjectArgument = Annotated[
    str, typer.Argument(metavar="PROJECT", help="Project name or id.", show_default=False)
]


def finish(code: int) -> None:
    """Exit with ``code`` unless it is 0 (success)."""
    if code:
        raise typer.Exit(code)
