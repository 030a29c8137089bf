"""gRPC status → exit code, and the error text a person reads instead of a traceback."""

from __future__ import annotations

import grpc
import pytest

from locus.cli.exit_codes import START_HINT, ExitCode, describe_rpc_error, exit_code_for

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "status",
    [
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.UNIMPLEMENTED,
    ],
)
def test_a_wrong_request_exits_2(status: grpc.StatusCode) -> None:
    assert exit_code_for(status) == ExitCode.USAGE
    assert int(ExitCode.USAGE) == 2


def test_no_stack_exits_3() -> None:
    assert exit_code_for(grpc.StatusCode.UNAVAILABLE) == ExitCode.UNAVAILABLE
    assert int(ExitCode.UNAVAILABLE) == 3


@pytest.mark.parametrize(
    "status",
    [
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.DATA_LOSS,
    ],
)
def test_a_server_failure_exits_1(status: grpc.StatusCode) -> None:
    assert exit_code_for(status) == ExitCode.FAILED
    assert int(ExitCode.FAILED) == 1


def test_cancelled_exits_like_ctrl_c() -> None:
    assert exit_code_for(grpc.StatusCode.CANCELLED) == 130
    assert exit_code_for(grpc.StatusCode.OK) == 0


def test_the_message_names_the_status_keeps_the_servers_words_and_the_request_id() -> None:
    text = describe_rpc_error(
        grpc.StatusCode.NOT_FOUND, "no project 'x'; create it first", "req-123"
    )
    assert text.splitlines() == [
        "NOT_FOUND: no project 'x'; create it first",
        "request id: req-123",
    ]


def test_unavailable_asks_whether_the_stack_runs() -> None:
    text = describe_rpc_error(grpc.StatusCode.UNAVAILABLE, "failed to connect", "r1")
    assert text.startswith("UNAVAILABLE: failed to connect")
    assert START_HINT in text
    assert "locus up" in START_HINT
    assert text.endswith("request id: r1")


def test_an_empty_message_is_said_to_be_empty() -> None:
    assert "no details" in describe_rpc_error(grpc.StatusCode.INTERNAL, None, "r")


def test_unavailable_behind_a_running_service_points_at_status_instead() -> None:
    text = describe_rpc_error(
        grpc.StatusCode.UNAVAILABLE, "retrieval is unavailable", "r1", from_server=True
    )
    assert START_HINT not in text
    assert "locus status" in text
