"""`locus up` as the end-to-end tests run it: a private data dir, started in its own session,
ready once it has written stack.json, stopped like Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

LOCUS = Path(sys.executable).parent / "locus"


def start_locus_up(
    root: Path,
    allowed_base: Path,
    environment: dict[str, str],
    *,
    within_seconds: float = 240,
    services: str = "",
) -> subprocess.Popen[bytes]:
    """Start the stack on ``root/data`` (``services``: only these, comma-separated); fails the
    test when it does not come up."""
    log = root / "up.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(LOCUS), "up",
                "--data-dir", str(root / "data"),
                "--allow-base", str(allowed_base),
                *(["--services", services] if services else []),
            ],
            env=environment,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + within_seconds
    while not (root / "data" / "stack.json").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"locus up did not start:\n{log.read_text()[-4000:]}")
        time.sleep(0.5)
    return process


def stop_locus_up(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


def run_locus(
    environment: dict[str, str], *arguments: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """One `locus` command against the stack ``environment`` points at (LOCUS_HOME)."""
    return subprocess.run(
        [str(LOCUS), *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
