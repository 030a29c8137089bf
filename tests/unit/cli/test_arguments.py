"""Argument validation and failures without a stack: exit codes and messages, no tracebacks."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from locus.cli.main import app
from locus.cli.question_scope import question_target

pytestmark = pytest.mark.unit

Invoke = Callable[..., tuple[int, str]]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """Invoke `locus` with no stack anywhere: an empty LOCUS_HOME and working directory."""
    monkeypatch.setenv("LOCUS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LOCUS_GATEWAY_ADDR", raising=False)
    monkeypatch.delenv("LOCUS_TRACES_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*arguments: str) -> tuple[int, str]:
        result = runner.invoke(app, list(arguments))
        assert not isinstance(result.exception, Exception) or isinstance(
            result.exception, SystemExit
        ), result.exception
        return result.exit_code, result.output

    return invoke


def test_help_lists_the_commands(run: Invoke) -> None:
    code, output = run("--help")
    assert code == 0
    for command in ("up", "project", "source", "scan", "symbols", "locate", "ask", "status"):
        assert command in output


def test_scan_wait_gives_up_after_an_hour_unless_told_otherwise(run: Invoke) -> None:
    """A scan that never finishes must not hold `scan --wait` forever."""
    code, output = run("scan", "--help")
    assert code == 0
    assert "3600" in output
    assert "goes on in the background" in " ".join(output.split())


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (("symbols", "p", "q", "--kind", "variable"), "'--kind'"),
        (("symbols", "p", "q", "--limit", "0"), "'--limit'"),
        (("feedback", "r_1", "6"), "'RATING'"),
        (("feedback", "r_1", "0"), "'RATING'"),
        (("locate", "p", "   "), "must not be empty"),
        (("ask", "p", ""), "must not be empty"),
        (("locate", "p", "q", "--max-files", "0"), "'--max-files'"),
        (("scan",), "Missing argument 'PROJECT'"),
        (("locate", "q"), "give PROJECT and QUESTION"),
        (("ask",), "give PROJECT and QUESTION"),
        (("locate", "p", "q", "--system", "s"), "not both"),
        (("ask", "p", "q", "--project", "a"), "not both"),
        (("ask", "--subsystem", "sales"), "missing QUESTION"),
        (("locate", "  ", "--system", "s"), "must not be empty"),
        (("project", "create"), "Missing argument 'NAME'"),
    ],
)
def test_bad_arguments_exit_2_before_any_call(
    run: Invoke, arguments: tuple[str, ...], complaint: str
) -> None:
    code, output = run(*arguments)
    assert code == 2
    assert complaint in output


def test_a_question_of_dash_is_read_from_standard_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = "Exception in thread main\n" + "\tat com.acme.Billing.total(Billing.java:42)\n" * 4000
    assert len(log) > 128 * 1024  # more than one shell argument may carry
    monkeypatch.setattr(sys, "stdin", io.StringIO(log))
    target = question_target("shop", "-", projects=None, subsystem="", system="")
    assert (target.project, target.question) == ("shop", log)


def test_an_empty_standard_input_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["locate", "shop", "-"], input="  \n")
    assert result.exit_code == 2
    assert "standard input was empty" in result.output


def test_up_refuses_unknown_services(run: Invoke, tmp_path: Path) -> None:
    code, output = run("up", "--data-dir", str(tmp_path / "d"), "--services", "ingestion,search")
    assert code == 2
    assert "unknown service(s) search" in output
    assert not (tmp_path / "d").exists()


def test_up_refuses_a_missing_allowed_base(run: Invoke, tmp_path: Path) -> None:
    code, output = run("up", "--data-dir", str(tmp_path / "d"), "--allow-base", "/no/such/dir")
    assert code == 2
    assert "not a directory" in output


@pytest.mark.parametrize(
    "arguments",
    [
        ("project", "list"),
        ("project", "create", "demo"),
        ("symbols", "demo", "retry", "--json"),
        ("status",),
    ],
)
def test_without_a_stack_commands_exit_3_and_say_how_to_start_one(
    run: Invoke, arguments: tuple[str, ...]
) -> None:
    code, output = run(*arguments)
    assert code == 3
    assert "no running Locus stack" in output
    assert "locus up" in output
    assert "request id: " in output
    assert "Traceback" not in output


def test_an_unreachable_gateway_is_unavailable(run: Invoke) -> None:
    code, output = run("project", "list", "--gateway", "127.0.0.1:1")
    assert code == 3
    assert "UNAVAILABLE" in output
    assert "is the stack running?" in output
    assert "Traceback" not in output


def test_down_without_a_stack_exits_3(run: Invoke) -> None:
    code, output = run("down")
    assert code == 3
    assert "no running Locus stack" in output


def test_source_add_takes_git_options_only_with_a_url(run: Invoke, tmp_path: Path) -> None:
    code, output = run("source", "add", "p", str(tmp_path), "--ref", "main")
    assert code == 2
    assert "belong to a git URL" in output
    code, output = run("source", "add", "p", "https://example.com/r.git", "--poll", "soon")
    assert code == 2
    assert "is not a duration" in output
