"""How a service process starts when it cannot: without its bus it says so in its log (without
the URL's credentials) while it waits and stops at once on SIGTERM; a start-up it refuses
(invalid settings, a store behind the code) exits 2 with one clear line, no traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the probe is


def clean_environment() -> dict[str, str]:
    """This process's environment without any Locus or OpenTelemetry setting."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}


def refused_start(environment: dict[str, str]) -> str:
    """Run the impact service with ``environment``; it must refuse to start: exit 2, no
    traceback. Its output."""
    result = subprocess.run(
        [sys.executable, "-m", "locus.impact"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    return output


def test_a_service_without_its_bus_says_so_and_obeys_sigterm(tmp_path: Path) -> None:
    environment = clean_environment()
    environment |= {
        "LOCUS_NATS_URL": f"nats://locus:s3cret-pass@127.0.0.1:{closed_port()}",
        "LOCUS_IMPACT_GRPC_PORT": "0",
        "LOCUS_IMPACT_DATA_DIR": str(tmp_path / "impact"),
    }
    log = tmp_path / "impact.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "locus.impact"],
            env=environment,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "cannot reach NATS" not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text(errors="replace")
    assert "stopping before start-up finished" in text
    assert "s3cret-pass" not in text
    assert "locus:***@127.0.0.1" in text or "***@127.0.0.1" in text


def test_a_store_behind_the_code_refuses_to_start_with_one_clear_line(tmp_path: Path) -> None:
    """migrate-on-start off and a database older than the code: exit 2, the reason, no traceback."""
    environment = clean_environment()
    environment |= {
        "LOCUS_NATS_URL": f"nats://127.0.0.1:{closed_port()}",
        "LOCUS_IMPACT_GRPC_PORT": "0",
        "LOCUS_IMPACT_DATA_DIR": str(tmp_path / "impact"),
        "LOCUS_IMPACT_MIGRATE_ON_START": "false",
    }
    output = refused_start(environment)
    assert "impact cannot start" in output
    assert "locus migrate" in output


def test_invalid_settings_refuse_the_start_with_the_variable_to_fix() -> None:
    environment = clean_environment()
    environment["LOCUS_IMPACT_GRPC_PORT"] = "99999"
    output = refused_start(environment)
    assert "cannot start: invalid settings" in output
    assert "LOCUS_IMPACT_GRPC_PORT" in output
