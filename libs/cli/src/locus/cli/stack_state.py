"""Where a running stack is: ``<data>/stack.json``, written by ``locus up`` once every service
is serving and removed when it stops, plus a pointer to it in ``$LOCUS_HOME`` (default
``~/.locus``) so the other commands find the stack from any directory. It names the files that
hold the stack's credentials (service token, NATS password, the gateway's admin key), never the
credentials themselves."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from locus.cli.exit_codes import CliError, ExitCode

STATE_FILE_NAME = "stack.json"
POINTER_FILE_NAME = "current-stack.json"
DEFAULT_DATA_DIR = Path(".locus")
STATE_VERSION = 1


@dataclass(frozen=True)
class RunningProcess:
    """One process of the stack: where it listens, its pid and its log."""

    address: str
    pid: int
    log_file: str
    restarts: int = 0  # how many times locus up restarted it after a crash
    metrics_address: str = ""  # host:port of its Prometheus /metrics ("" when off)


@dataclass(frozen=True)
class StackState:
    supervisor_pid: int
    data_dir: str
    started_at: str
    nats: RunningProcess
    services: dict[str, RunningProcess]
    traces_file: str = ""
    version: int = STATE_VERSION
    # Absolute paths of the stack's credential files ("" for a stack started without them).
    service_token_file: str = ""
    nats_user: str = ""
    nats_password_file: str = ""
    admin_key_file: str = ""

    def address_of(self, service: str) -> str | None:
        running = self.services.get(service)
        return running.address if running else None

    @property
    def state_file(self) -> Path:
        return Path(self.data_dir) / STATE_FILE_NAME

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "supervisor_pid": self.supervisor_pid,
            "data_dir": self.data_dir,
            "started_at": self.started_at,
            "traces_file": self.traces_file,
            "service_token_file": self.service_token_file,
            "nats_user": self.nats_user,
            "nats_password_file": self.nats_password_file,
            "admin_key_file": self.admin_key_file,
            # The addresses the other commands need, at the top for scripts (jq .gateway_addr).
            "gateway_addr": self.address_of("gateway"),
            "ingestion_addr": self.address_of("ingestion"),
            "ast_addr": self.address_of("ast"),
            # The MCP server's Streamable HTTP endpoint (coding agents), when it runs.
            "mcp_url": f"http://{self.address_of('mcp')}/mcp" if self.address_of("mcp") else None,
            "nats": asdict(self.nats),
            "services": {name: asdict(running) for name, running in self.services.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StackState:
        return cls(
            supervisor_pid=int(data["supervisor_pid"]),
            data_dir=str(data["data_dir"]),
            started_at=str(data.get("started_at", "")),
            traces_file=str(data.get("traces_file") or ""),
            nats=RunningProcess(**data["nats"]),
            services={name: RunningProcess(**value) for name, value in data["services"].items()},
            version=int(data.get("version", STATE_VERSION)),
            service_token_file=str(data.get("service_token_file") or ""),
            nats_user=str(data.get("nats_user") or ""),
            nats_password_file=str(data.get("nats_password_file") or ""),
            admin_key_file=str(data.get("admin_key_file") or ""),
        )


def locus_home() -> Path:
    return Path(os.environ.get("LOCUS_HOME") or Path.home() / ".locus").expanduser()


def pointer_file() -> Path:
    return locus_home() / POINTER_FILE_NAME


def _write_atomically(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def write_state(state: StackState) -> None:
    _write_atomically(state.state_file, state.to_json())
    _write_atomically(
        pointer_file(),
        {"state_file": str(state.state_file), "supervisor_pid": state.supervisor_pid},
    )


def remove_state(state: StackState) -> None:
    """Remove the state file, and the pointer only while it still points at this stack."""
    state.state_file.unlink(missing_ok=True)
    pointer = pointer_file()
    target = _read_json(pointer)
    if target is not None and target.get("state_file") == str(state.state_file):
        pointer.unlink(missing_ok=True)


def process_is_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_state(state_file: Path) -> StackState | None:
    """What ``state_file`` says, whether or not that stack still runs."""
    data = _read_json(state_file)
    if data is None:
        return None
    try:
        return StackState.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None


def load_state(state_file: Path) -> StackState | None:
    """The stack described by ``state_file`` if its ``locus up`` process still runs."""
    state = read_state(state_file)
    return state if state is not None and process_is_alive(state.supervisor_pid) else None


def find_running_stack() -> StackState | None:
    """The stack the pointer names, else one started from this directory with the default
    data dir; None when neither runs."""
    pointer = _read_json(pointer_file())
    candidates = [Path(str(pointer["state_file"]))] if pointer and "state_file" in pointer else []
    candidates.append(DEFAULT_DATA_DIR.resolve() / STATE_FILE_NAME)
    for candidate in candidates:
        state = load_state(candidate)
        if state is not None:
            return state
    return None


def require_running_stack() -> StackState:
    state = find_running_stack()
    if state is None:
        raise CliError(
            f"no running Locus stack found (looked at {pointer_file()} and "
            f"{DEFAULT_DATA_DIR / STATE_FILE_NAME}); start one with `locus up`, "
            "or point at a gateway with --gateway ADDR / LOCUS_GATEWAY_ADDR",
            ExitCode.UNAVAILABLE,
        )
    return state
