"""The test fixtures themselves: a service that cannot start fails the tests that need it (it
never turns them into skips), unless the documented opt-out is set for a partial local run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from required import ALLOW_MISSING

from locus.messaging import EmbeddedNatsServer

pytestmark = pytest.mark.integration

NEEDS_A_BROKEN_SERVICE = """
from required import unavailable


def test_needs_impact():
    unavailable("the impact service", "it did not start: exited with code 1")
"""


def run_pytest(test_file: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    support = Path(__file__).resolve().parents[2] / "support"
    env = {k: v for k, v in os.environ.items() if k != ALLOW_MISSING} | environment
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file),
         "--rootdir", str(test_file.parent), "-o", f"pythonpath={support}"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_a_missing_component_fails_the_run_and_the_opt_out_skips(tmp_path: Path) -> None:
    test_file = tmp_path / "test_needs.py"
    test_file.write_text(NEEDS_A_BROKEN_SERVICE)

    strict = run_pytest(test_file)
    assert strict.returncode == 1, strict.stdout
    assert "1 failed" in strict.stdout
    assert "the impact service is required and unavailable" in strict.stdout

    partial = run_pytest(test_file, **{ALLOW_MISSING: "1"})
    assert partial.returncode == 0, partial.stdout
    assert "1 skipped" in partial.stdout


def test_a_service_that_crashes_at_start_up_fails_at_once_with_its_log(
    nats_server: EmbeddedNatsServer, tmp_path: Path, stack_type: type[Any]
) -> None:
    stack = stack_type(
        nats_url=nats_server.url,
        stream_name="LOCUS_BROKEN",
        subject_prefix="locus.broken.v1",
        work_dir=tmp_path,
        addresses={},
        environment={
            "LOCUS_NATS_URL": nats_server.url,
            # A store that cannot exist: the service dies while starting.
            "LOCUS_IMPACT_DATABASE_URL": "nosuchdialect://nowhere/db",
        },
    )
    started = time.monotonic()
    with pytest.raises(RuntimeError) as raised:
        stack.start_service("impact")
    assert time.monotonic() - started < 60  # not the whole start-up wait
    assert "exited with code" in str(raised.value)
    assert "nosuchdialect" in str(raised.value)  # the service's own log says why

    stack.problems["impact"] = f"it did not start: {raised.value}"
    with pytest.raises(pytest.fail.Exception, match="the impact service is required"):
        stack.require("impact")
