"""A `locus up` run by the system benchmark: started on a private data dir and LOCUS_HOME,
ready once it has written ``<data dir>/stack.json``, stopped (and started again on the same data
dir, for the restart measurement) like Ctrl-C would, and its processes' peak memory and CPU time
read from ``/proc/<pid>/status`` and ``/proc/<pid>/stat``.

Every LOCUS_* variable of the caller's environment is dropped so the figures come from the
default settings; the embedding model directory is set to an absolute path, the one the
in-process embedder baseline loads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from locus.cli.stack_state import STATE_FILE_NAME, StackState, read_state


@dataclass(frozen=True)
class ProcessMemory:
    peak_rss_mib: float  # VmHWM: the most resident memory the process ever had
    current_rss_mib: float  # VmRSS


def process_memory(pid: int) -> ProcessMemory | None:
    """Peak and current resident memory of a live process (Linux), None where unreadable."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kib = {}
    for line in status.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            kib[key] = int(value.split()[0])
    if "VmHWM" not in kib:
        return None
    return ProcessMemory(kib["VmHWM"] / 1024, kib.get("VmRSS", 0) / 1024)


def _stat_fields(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()  # the command name may hold spaces


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds a live process and its children (a service's parser pool,
    its embedding process) have used so far (Linux), None where unreadable. Children that
    exited count once their parent has reaped them."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            child = _stat_fields(int(entry.name))
            if child is not None and child[1] == str(pid):
                ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


class BenchStack:
    """Starts and stops one `locus up` on ``data_dir``; each start waits for stack.json."""

    def __init__(
        self,
        *,
        data_dir: Path,
        allowed_bases: list[Path],
        locus_home: Path,
        model_dir: Path,
        console_log: Path,
        environment: dict[str, str] | None = None,
    ) -> None:
        self._data_dir = data_dir
        self._environment = environment or {}  # LOCUS_* settings of this run, on top
        self._allowed_bases = allowed_bases
        self._locus_home = locus_home
        self._model_dir = model_dir
        self._console_log = console_log
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def state_file(self) -> Path:
        return self._data_dir / STATE_FILE_NAME

    def start(self, *, timeout_seconds: float = 300) -> tuple[StackState, float]:
        """Start the stack; returns it and the seconds until every service was serving."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("LOCUS_")}
        environment["LOCUS_HOME"] = str(self._locus_home)
        environment["LOCUS_RETRIEVAL_MODEL_DIR"] = str(self._model_dir)
        environment |= self._environment
        command = [str(Path(sys.executable).parent / "locus"), "up", "--data-dir"]
        command.append(str(self._data_dir))
        for base in self._allowed_bases:
            command += ["--allow-base", str(base)]
        self.state_file.unlink(missing_ok=True)
        started = time.perf_counter()
        with self._console_log.open("ab") as console:
            self._process = subprocess.Popen(
                command,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # our Ctrl-C reaches it only through stop()
            )
        deadline = time.monotonic() + timeout_seconds
        while not self.state_file.exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"locus up did not start; see {self._console_log}")
            time.sleep(0.1)
        state = read_state(self.state_file)
        if state is None:
            self.stop()
            raise RuntimeError(f"unreadable {self.state_file}; see {self._console_log}")
        return state, time.perf_counter() - started

    def wait(self, timeout_seconds: float) -> int | None:
        """Wait for `locus up` to exit on its own; its exit code, None while it still runs."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, *, timeout_seconds: float = 120) -> None:
        """Stop it as Ctrl-C would (services in reverse order, nats-server last)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)  # a second interrupt kills what is left
            process.wait(timeout=30)
