"""How a failed command ends: the exit code for each gRPC status, and the message a person reads
(status name, the server's own message, the request ID) instead of a traceback."""

from __future__ import annotations

from enum import IntEnum

import grpc


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # the server or the work failed (INTERNAL, a failed scan, ...)
    USAGE = 2  # the request itself was wrong (bad argument, unknown project, not allowed, ...)
    UNAVAILABLE = 3  # no stack to talk to
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


_USAGE_STATUSES = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)

START_HINT = "is the stack running? start it with `locus up`"
DOWNSTREAM_HINT = "a service it needs is down or not installed; `locus status` shows which"


class CliError(Exception):
    """A failure the CLI explains itself (no stack found, a service this stack does not run)."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def exit_code_for(status: grpc.StatusCode) -> ExitCode:
    if status == grpc.StatusCode.OK:
        return ExitCode.OK
    if status in _USAGE_STATUSES:
        return ExitCode.USAGE
    if status == grpc.StatusCode.UNAVAILABLE:
        return ExitCode.UNAVAILABLE
    if status == grpc.StatusCode.CANCELLED:
        return ExitCode.INTERRUPTED
    return ExitCode.FAILED


def describe_rpc_error(
    status: grpc.StatusCode, details: str | None, request_id: str, *, from_server: bool = False
) -> str:
    """One readable error: ``NOT_FOUND: no project 'x'; create it first`` plus the request ID.
    ``from_server``: a service answered (so it runs, and something behind it is unavailable)."""
    message = (details or "").strip() or "no details from the server"
    lines = [f"{status.name}: {message}"]
    if status == grpc.StatusCode.UNAVAILABLE:
        lines.append(DOWNSTREAM_HINT if from_server else START_HINT)
    lines.append(f"request id: {request_id}")
    return "\n".join(lines)
