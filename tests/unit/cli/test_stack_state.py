"""The state file of a running stack and the pointer that lets commands find it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.stack_state import (
    RunningProcess,
    StackState,
    find_running_stack,
    load_state,
    pointer_file,
    remove_state,
    require_running_stack,
    write_state,
)

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def locus_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("LOCUS_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


def a_state(data_dir: Path, pid: int | None = None) -> StackState:
    return StackState(
        supervisor_pid=os.getpid() if pid is None else pid,
        data_dir=str(data_dir),
        started_at="2025-01-01T00:00:00+00:00",
        nats=RunningProcess("nats://127.0.0.1:4222", 11, str(data_dir / "nats/nats.log")),
        services={
            "ingestion": RunningProcess("127.0.0.1:50051", 12, str(data_dir / "logs/i.log")),
            "ast": RunningProcess("127.0.0.1:50052", 13, str(data_dir / "logs/a.log")),
        },
    )


def a_dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_written_state_has_the_addresses_scripts_need(tmp_path: Path, locus_home: Path) -> None:
    state = a_state(tmp_path / "data")
    write_state(state)
    data = json.loads((tmp_path / "data" / "stack.json").read_text())
    assert data["gateway_addr"] is None
    assert data["ingestion_addr"] == "127.0.0.1:50051"
    assert data["ast_addr"] == "127.0.0.1:50052"
    assert data["services"]["ast"]["pid"] == 13
    pointer = json.loads((locus_home / "current-stack.json").read_text())
    assert pointer["state_file"] == str(tmp_path / "data" / "stack.json")


def test_the_pointer_finds_the_stack_from_anywhere(tmp_path: Path) -> None:
    state = a_state(tmp_path / "data")
    write_state(state)
    assert find_running_stack() == state
    assert require_running_stack().address_of("ingestion") == "127.0.0.1:50051"


def test_a_stack_whose_locus_up_is_gone_is_not_running(tmp_path: Path) -> None:
    write_state(a_state(tmp_path / "data", pid=a_dead_pid()))
    assert load_state(tmp_path / "data" / "stack.json") is None
    assert find_running_stack() is None
    with pytest.raises(CliError) as raised:
        require_running_stack()
    assert raised.value.exit_code == ExitCode.UNAVAILABLE
    assert "locus up" in raised.value.message


def test_without_a_pointer_the_default_data_dir_is_tried(tmp_path: Path) -> None:
    state = a_state(tmp_path / ".locus")
    write_state(state)
    pointer_file().unlink()
    assert find_running_stack() == state


def test_removal_leaves_another_stacks_pointer_alone(tmp_path: Path) -> None:
    first = a_state(tmp_path / "first")
    second = a_state(tmp_path / "second")
    write_state(first)
    write_state(second)
    remove_state(first)
    assert not first.state_file.exists()
    assert pointer_file().exists()
    remove_state(second)
    assert not pointer_file().exists()


def test_a_corrupt_state_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "stack.json").write_text("{not json")
    assert load_state(tmp_path / "stack.json") is None
