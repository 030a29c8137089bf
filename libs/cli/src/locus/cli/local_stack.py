"""``locus up``: the whole system on one machine. An embedded nats-server and each installed
service as its own process (``python -m locus.<name>``) with its own port, data dir, log file and
environment; ready once every health check says SERVING; stopped in reverse order on Ctrl-C or
SIGTERM, nats-server last.

Everything listens on loopback with the checks a deployment has (docs/adr/0009): on its first
start the stack makes a random service token and NATS password, kept in files only their owner
can read in the data dir; nats-server accepts only that user, every service gets the files'
paths (never the secrets) in its environment, and the gateway the path of its admin key file.

Supervision: a service that dies is restarted on its port with back-off (1 s, doubling to 30 s),
reported on the console, in its log and by ``locus status`` (its restart count); after
``max_restarts`` crashes within ``restart_window`` seconds it is given up on loudly and the stack
stops with a non-zero exit. Its work is not lost: events it had not acknowledged are redelivered
by JetStream to the restarted process. nats-server dying stops the stack (every service depends
on it). The services die with ``locus up`` whatever kills it (Linux: parent-death signal), and
their logs are appended (rotated past ``LOG_ROTATE_BYTES``), never wiped, so a crash's evidence
stays."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.stack_credentials import StackCredentials, mesh_credentials
from locus.cli.stack_state import (
    STATE_FILE_NAME,
    RunningProcess,
    StackState,
    process_is_alive,
    read_state,
    remove_state,
    write_state,
)
from locus.cli.terminal_output import make_console
from locus.rpc import MeshCredentials, wait_until_serving

T = TypeVar("T")

HOST = "127.0.0.1"
# Dependency order: a service starts after the ones it calls or consumes from.
SERVICE_ORDER = ("ingestion", "ast", "retrieval", "impact", "answer", "gateway", "mcp")
DEFAULT_PORTS = {
    "gateway": 50050,
    "ingestion": 50051,
    "ast": 50052,
    "retrieval": 50053,
    "impact": 50054,
    "answer": 50055,
    "mcp": 50056,
}
# Each service's Prometheus /metrics (another free port when the default is taken).
DEFAULT_METRICS_PORTS = {name: 9460 + index for index, name in enumerate(DEFAULT_PORTS)}
# Processes that serve HTTP, not gRPC: <PREFIX>HTTP_HOST/PORT, health GET /healthz, no metrics.
HTTP_SERVICES = frozenset({"mcp"})
# Stages whose index.updated reports complete a scan job, when they run.
INDEXING_STAGES = ("ast", "retrieval", "impact")
LOG_TAIL_LINES = 40
LOG_ROTATE_BYTES = 20 * 1024 * 1024  # a log past this is kept as <name>.log.1 at a (re)start
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class UpOptions:
    data_dir: Path
    allowed_bases: list[Path]
    services: list[str]
    traces_file: Path | None = None
    startup_timeout: float = 120.0
    stop_timeout: float = 15.0
    max_restarts: int = 5  # crashes of one service within restart_window before giving up
    restart_window: float = 300.0
    restart_backoff: float = 1.0  # the first restart's delay; doubles, at most 30 s


@dataclass
class _Child:
    name: str
    process: subprocess.Popen[bytes]
    address: str
    log_file: Path
    restarts: int = 0
    crashes: list[float] = field(default_factory=list)
    metrics_address: str = ""  # monotonic times, within the window


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """In the child before exec: SIGTERM when locus up dies, even by SIGKILL (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def open_log(path: Path) -> Any:
    """The log opened for appending (rotated to ``.1`` once past LOG_ROTATE_BYTES), with a line
    marking this start: earlier runs' lines, a crash's included, stay."""
    if path.exists() and path.stat().st_size > LOG_ROTATE_BYTES:
        path.replace(path.with_name(path.name + ".1"))
    log = path.open("ab")
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    log.write(f"----- locus up started this process at {stamp} -----\n".encode())
    log.flush()
    return log


class StartupFailed(Exception):
    def __init__(self, name: str, reason: str, log_file: Path | None) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason
        self.log_file = log_file


class _Interrupted(Exception):
    """Ctrl-C or SIGTERM arrived while the stack was starting."""


# choosing what to run


def _is_runnable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except Exception:  # a half-built package may fail to import: it is not runnable yet
        return False


def installed_services() -> list[str]:
    """The services this environment can run (``python -m locus.<name>`` exists)."""
    return [name for name in SERVICE_ORDER if _is_runnable(f"locus.{name}.__main__")]


def parse_service_list(value: str | None) -> list[str]:
    if value is None:
        return []
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def select_services(requested: Sequence[str], installed: Sequence[str]) -> list[str]:
    """What to start, in dependency order: the requested services (all installed ones when
    none are requested). Unknown or uninstalled names are a usage error."""
    if requested:
        unknown = sorted(set(requested) - set(SERVICE_ORDER))
        if unknown:
            raise CliError(
                f"unknown service(s) {', '.join(unknown)}; choose from {', '.join(SERVICE_ORDER)}",
                ExitCode.USAGE,
            )
        missing = [name for name in SERVICE_ORDER if name in requested and name not in installed]
        if missing:
            raise CliError(
                f"not installed in this environment: {', '.join(missing)} "
                f"(no python -m locus.{missing[0]}); run `make setup` or leave them out",
                ExitCode.USAGE,
            )
    chosen = [name for name in SERVICE_ORDER if name in (requested or installed)]
    if not chosen:
        raise CliError(
            "no Locus service is installed in this environment; run `make setup`", ExitCode.USAGE
        )
    return chosen


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def choose_ports(
    services: Iterable[str], defaults: Mapping[str, int] = DEFAULT_PORTS
) -> dict[str, int]:
    """The default port of each service when it is free, else a free one from the OS."""
    ports: dict[str, int] = {}
    held: list[socket.socket] = []  # kept bound until all are chosen, so no two are the same
    try:
        for name in services:
            if port_is_free(defaults[name]):
                ports[name] = defaults[name]
                continue
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(probe)
            probe.bind((HOST, 0))
            ports[name] = int(probe.getsockname()[1])
    finally:
        for probe in held:
            probe.close()
    return ports


def service_environment(
    name: str,
    *,
    ports: Mapping[str, int],
    nats_url: str,
    data_dir: Path,
    metrics_port: int | None = None,
    allowed_bases: Sequence[Path],
    traces_file: Path | None,
    inherited: Mapping[str, str],
    credentials: StackCredentials | None = None,
) -> dict[str, str]:
    """The environment of one service process: its port and data dir, the bus, every peer's
    address, what ingestion may read, which stages complete a scan, and where the stack's
    credentials are."""
    prefix = f"LOCUS_{name.upper()}_"
    env = (
        dict(inherited) if credentials is None else credentials.service_environment(name, inherited)
    )
    env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "LOCUS_NATS_URL": nats_url,
            f"{prefix}GRPC_HOST": HOST,
            f"{prefix}GRPC_PORT": str(ports[name]),
            f"{prefix}DATA_DIR": str(data_dir / name),
            "LOCUS_INGESTION_ALLOWED_BASES": json.dumps([str(base) for base in allowed_bases]),
            "LOCUS_INGESTION_REQUIRED_STAGES": ",".join(s for s in INDEXING_STAGES if s in ports),
            # retrieval's vectors lane makes files embedded after they are searchable; with the
            # lane off no process of this stack ever embeds, so searchable is as far as a scan goes
            "LOCUS_INGESTION_EMBEDDING_STAGES": (
                "vectors" if "retrieval" in ports and vectors_lane_enabled(env) else ""
            ),
        }
    )
    if name in HTTP_SERVICES:
        env[f"{prefix}HTTP_HOST"] = HOST
        env[f"{prefix}HTTP_PORT"] = str(ports[name])
    if metrics_port is not None:
        env[f"{prefix}METRICS_HOST"] = HOST
        env[f"{prefix}METRICS_PORT"] = str(metrics_port)
    for peer, port in ports.items():
        env[f"LOCUS_{peer.upper()}_ADDR"] = f"{HOST}:{port}"
    if traces_file is not None:
        env["LOCUS_TRACES_FILE"] = str(traces_file)
    return env


def vectors_lane_enabled(environment: Mapping[str, str]) -> bool:
    """Whether retrieval, started with ``environment``, embeds: its setting read as its own
    settings read it (a value it would refuse counts as on; retrieval then says why at start)."""
    value = environment.get("LOCUS_RETRIEVAL_VECTORS_LANE_ENABLED")
    if value is None:
        return True
    try:
        return bool(TypeAdapter(bool).validate_python(value))
    except ValidationError:
        return True


def health_url(address: str) -> str:
    return f"http://{address}/healthz"


def http_health(url: str, timeout: float = 2.0) -> int:
    """The HTTP status of a GET of ``url`` (0 when nothing answered)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except (OSError, http.client.HTTPException):
        # HTTPException: something that is not an HTTP server answered, e.g. the probe's own
        # request read back over a TCP self-connection to a port nothing listens on yet
        # (BadStatusLine: "GET /healthz HTTP/1.1").
        return 0


async def wait_until_http_ok(url: str, within_seconds: float) -> None:
    """Poll ``url`` until it answers 200, or raise TimeoutError."""
    deadline = time.monotonic() + within_seconds
    status = 0
    while time.monotonic() < deadline:
        status = await asyncio.to_thread(http_health, url)
        if status == 200:
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"{url} not 200 after {within_seconds:.0f}s (last: {status or 'no answer'})")


def is_process_of(pid: int, command_part: str) -> bool:
    """Whether ``pid`` runs a command line containing ``command_part`` (Linux /proc; False
    where that cannot be checked, so an unrelated process that reused the pid is never hit)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, UnicodeDecodeError):
        return False
    return command_part in command


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# running it


class LocalStack:
    """Starts, watches and stops the processes of one ``locus up``."""

    def __init__(self, options: UpOptions, console: Console) -> None:
        self._options = options
        self._console = console
        self._data_dir = options.data_dir
        self._logs = options.data_dir / "logs"
        self._children: list[_Child] = []
        self._ports: Mapping[str, int] = {}
        self._metrics_ports: Mapping[str, int] = {}
        self._nats_url = ""
        self._nats: _Child | None = None
        self._nats_server_pid = 0
        self._credentials: StackCredentials | None = None
        self._mesh: MeshCredentials | None = None  # for the health checks (mTLS when set)
        self._signals = 0
        self._stopping = asyncio.Event()
        self._hurry = asyncio.Event()  # a second Ctrl-C: kill instead of waiting

    def _on_signal(self) -> None:
        self._signals += 1
        if self._signals == 2:
            self._console.print("[yellow]second interrupt: killing what is left[/]")
            self._hurry.set()
        self._stopping.set()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._on_signal)
        state: StackState | None = None
        try:
            started = time.monotonic()
            try:
                await self._start()
            except _Interrupted:
                self._console.print("interrupted while starting; stopping")
                return ExitCode.OK
            except StartupFailed as failure:
                self._report_failure(failure.name, failure.reason, failure.log_file)
                return ExitCode.FAILED
            state = self._state()
            write_state(state)
            self._print_ready(state, time.monotonic() - started)
            return await self._watch()
        finally:
            await self._stop_all()
            if state is not None:
                remove_state(state)
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    # start

    async def _start(self) -> None:
        self._logs.mkdir(parents=True, exist_ok=True)
        self._credentials = StackCredentials.ensure(self._data_dir)
        self._mesh = mesh_credentials(self._credentials.service_token_file)
        nats_url = await self._start_nats()
        ports = choose_ports(self._options.services)
        self._metrics_ports = choose_ports(
            [name for name in self._options.services if name not in HTTP_SERVICES],
            DEFAULT_METRICS_PORTS,
        )
        self._ports, self._nats_url = ports, nats_url
        for name in self._options.services:
            self._children.append(self._spawn_service(name, ports, nats_url))
        try:
            async with asyncio.TaskGroup() as group:
                for child in self._children:
                    group.create_task(self._until_serving(child))
        except* StartupFailed as failures:
            first = failures.exceptions[0]
            raise first from None
        except* _Interrupted:
            raise _Interrupted from None

    async def _start_nats(self) -> str:
        self._nats = self._spawn_nats_host()
        stdout = self._nats.process.stdout
        assert stdout is not None
        try:
            line = await self._unless_interrupted(
                asyncio.wait_for(asyncio.to_thread(stdout.readline), timeout=30)
            )
            info = json.loads(line)
        except (TimeoutError, ValueError):
            raise StartupFailed("nats-server", "did not start", self._nats.log_file) from None
        self._nats.address = str(info["url"])
        self._nats_server_pid = int(info["pid"])
        return self._nats.address

    def _spawn_nats_host(self) -> _Child:
        log_file = self._logs / "nats.log"
        assert self._credentials is not None
        with open_log(log_file) as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "locus.cli.nats_host",
                    str(self._data_dir / "nats"),
                    self._credentials.nats_user,
                    str(self._credentials.nats_password_file),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,  # the terminal's Ctrl-C must not reach nats-server
            )
        return _Child("nats-server", process, "", log_file)

    def _spawn_service(self, name: str, ports: Mapping[str, int], nats_url: str) -> _Child:
        env = service_environment(
            name,
            ports=ports,
            nats_url=nats_url,
            data_dir=self._data_dir,
            metrics_port=self._metrics_ports.get(name),
            allowed_bases=self._options.allowed_bases,
            traces_file=self._options.traces_file,
            inherited=os.environ,
            credentials=self._credentials,
        )
        (self._data_dir / name).mkdir(parents=True, exist_ok=True)
        log_file = self._logs / f"{name}.log"
        with open_log(log_file) as log:
            process = subprocess.Popen(
                [sys.executable, "-m", f"locus.{name}"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # stopped by us, in order, not by the terminal's Ctrl-C
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        child = _Child(name, process, f"{HOST}:{ports[name]}", log_file)
        if name in self._metrics_ports:
            child.metrics_address = f"{HOST}:{self._metrics_ports[name]}"
        return child

    async def _until_serving(self, child: _Child) -> None:
        health = asyncio.create_task(
            wait_until_http_ok(health_url(child.address), self._options.startup_timeout)
            if child.name in HTTP_SERVICES
            else wait_until_serving(
                child.address, within_seconds=self._options.startup_timeout, mesh=self._mesh
            )
        )
        try:
            while not health.done():
                if self._stopping.is_set():
                    raise _Interrupted
                if child.process.poll() is not None:
                    raise StartupFailed(
                        child.name,
                        f"exited with code {child.process.returncode} while starting",
                        child.log_file,
                    )
                await asyncio.wait({health}, timeout=0.1)
            health.result()
        except TimeoutError as error:
            raise StartupFailed(child.name, str(error), child.log_file) from None
        finally:
            health.cancel()

    async def _unless_interrupted(self, work: Awaitable[T]) -> T:
        task = asyncio.ensure_future(work)
        stopping = asyncio.create_task(self._stopping.wait())
        try:
            await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not task.done():
            task.cancel()
            raise _Interrupted
        return task.result()

    def _state(self) -> StackState:
        assert self._nats is not None
        assert self._credentials is not None
        credentials = self._credentials
        return StackState(
            supervisor_pid=os.getpid(),
            data_dir=str(self._data_dir),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            traces_file=str(self._options.traces_file or ""),
            nats=RunningProcess(
                self._nats.address,
                self._nats_server_pid,
                str(self._data_dir / "nats" / "nats.log"),
            ),
            services={
                child.name: RunningProcess(
                    child.address,
                    child.process.pid,
                    str(child.log_file),
                    child.restarts,
                    child.metrics_address,
                )
                for child in self._children
            },
            service_token_file=str(credentials.service_token_file),
            nats_user=credentials.nats_user,
            nats_password_file=str(credentials.nats_password_file),
            admin_key_file=str(credentials.admin_key_file) if "gateway" in self._ports else "",
        )

    def _print_ready(self, state: StackState, elapsed: float) -> None:
        table = Table(title=f"Locus stack ({elapsed:.1f} s to start)", title_justify="left")
        for column in ("service", "address", "pid", "log file"):
            table.add_column(column, overflow="fold")
        table.add_row("nats-server", state.nats.address, str(state.nats.pid), state.nats.log_file)
        for name, running in state.services.items():
            table.add_row(name, running.address, str(running.pid), running.log_file)
        self._console.print(table)
        not_running = [name for name in SERVICE_ORDER if name not in state.services]
        if not_running:
            self._console.print(f"not started: {', '.join(not_running)}")
        self._console.print(f"state file: {state.state_file}")
        self._console.print(
            f"service token: {state.service_token_file}; NATS user {state.nats_user}, password: "
            f"{state.nats_password_file} (internal RPCs and the bus require them)"
        )
        if state.traces_file:
            self._console.print(f"traces: {state.traces_file}")
        self._console.print("ready; Ctrl-C stops the stack", style="bold green")

    # watch and stop

    async def _watch(self) -> int:
        while not self._stopping.is_set():
            if self._nats is not None and self._nats.process.poll() is not None:
                self._report_failure(
                    "nats-server",
                    f"exited unexpectedly with code {self._nats.process.returncode}",
                    self._nats.log_file,
                )
                return ExitCode.FAILED
            for index, child in enumerate(self._children):
                if child.process.poll() is None:
                    continue
                restarted = await self._restart(child)
                if restarted is None:
                    if self._stopping.is_set():
                        return ExitCode.OK
                    return ExitCode.FAILED
                self._children[index] = restarted
                write_state(self._state())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=0.25)
        return ExitCode.OK

    async def _restart(self, child: _Child) -> _Child | None:
        """Restart a service that died, with back-off, until it serves again; None when it
        crashed too often (reported) or the stack is stopping."""
        options = self._options
        while True:
            code = child.process.returncode
            now = time.monotonic()
            crashes = [t for t in child.crashes if now - t < options.restart_window] + [now]
            if len(crashes) > options.max_restarts:
                self._report_failure(
                    child.name,
                    f"exited with code {code}: {len(crashes)} crashes in "
                    f"{options.restart_window:.0f} s, giving up",
                    child.log_file,
                )
                return None
            delay = min(options.restart_backoff * 2 ** (len(crashes) - 1), 30.0)
            self._console.print(
                f"[yellow]{escape(child.name)} exited with code {code}; restarting it in "
                f"{delay:.0f} s (crash {len(crashes)} of at most {options.max_restarts} in "
                f"{options.restart_window:.0f} s); its log: {child.log_file}[/]"
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=delay)
            if self._stopping.is_set():
                return None
            fresh = self._spawn_service(child.name, self._ports, self._nats_url)
            fresh.restarts, fresh.crashes = child.restarts + 1, crashes
            try:
                await self._until_serving(fresh)
            except _Interrupted:
                await self._stop(fresh)
                return None
            except StartupFailed as failure:
                self._console.print(
                    f"[red]{escape(child.name)} did not restart: {failure.reason}[/]"
                )
                if fresh.process.poll() is None:
                    fresh.process.kill()
                    await asyncio.to_thread(fresh.process.wait)
                child = fresh
                continue
            self._console.print(
                f"[green]{escape(child.name)} restarted (pid {fresh.process.pid}, "
                f"restart {fresh.restarts})[/]"
            )
            return fresh

    def _report_failure(self, name: str, reason: str, log_file: Path | None) -> None:
        self._console.print(f"[bold red]{escape(name)} {escape(reason)}[/]")
        if log_file is not None:
            tail = log_tail(log_file)
            self._console.print(f"last lines of {log_file}:", style="red")
            self._console.print(tail or "(empty)", markup=False, highlight=False)
        self._console.print("stopping the rest of the stack", style="red")

    async def _stop_all(self) -> None:
        for child in reversed(self._children):
            await self._stop(child)
        if self._nats is not None:
            await self._stop(self._nats)
            if self._nats.process.stdout is not None:
                self._nats.process.stdout.close()

    async def _stop(self, child: _Child) -> None:
        process = child.process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            exited = asyncio.create_task(
                asyncio.to_thread(_wait_for_exit, process, self._options.stop_timeout)
            )
            hurry = asyncio.create_task(self._hurry.wait())
            await asyncio.wait({exited, hurry}, return_when=asyncio.FIRST_COMPLETED)
            hurry.cancel()
            if process.poll() is None:
                self._console.print(f"{child.name} did not stop in time; killing it")
                process.kill()
            await exited
        await asyncio.to_thread(process.wait)
        self._console.print(f"stopped {child.name} (exit code {process.returncode})")


def _wait_for_exit(process: subprocess.Popen[bytes], timeout: float) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout)


def stop_leftovers(previous: StackState, console: Console, timeout: float) -> None:
    """Stop what a ``locus up`` that was killed left running on its data dir: those processes
    would hold their ports and write to the same stores as the new ones."""
    candidates = [("nats-server", previous.nats.pid, "nats-server")]
    candidates += [(name, p.pid, f"locus.{name}") for name, p in previous.services.items()]
    leftovers = [(name, pid) for name, pid, command in candidates if is_process_of(pid, command)]
    for name, pid in leftovers:
        console.print(f"stopping {name} (pid {pid}), left running by an earlier locus up")
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(process_is_alive(pid) for _, pid in leftovers) and time.monotonic() < deadline:
        time.sleep(0.1)
    for _, pid in leftovers:
        if process_is_alive(pid):
            os.kill(pid, signal.SIGKILL)


def run_up(options: UpOptions, console: Console | None = None) -> int:
    console = console or make_console()
    previous = read_state(options.data_dir / STATE_FILE_NAME)
    if previous is not None and process_is_alive(previous.supervisor_pid):
        raise CliError(
            f"a stack is already running from {options.data_dir} (locus up pid "
            f"{previous.supervisor_pid}); stop it first or pick another --data-dir",
            ExitCode.USAGE,
        )
    if previous is not None:
        stop_leftovers(previous, console, options.stop_timeout)
    return asyncio.run(LocalStack(options, console).run())
