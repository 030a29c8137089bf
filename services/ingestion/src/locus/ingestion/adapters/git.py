"""Running git on a source root: a fixed, read-only command line (no pager, no fsmonitor hook,
system config ignored; ``safe.directory`` accepts a work tree another user owns, such as a
mounted volume, since the operator registered the root as a source)."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

GIT_OPTIONS = (
    "-c",
    "safe.directory=*",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "--no-pager",
)


def git_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return env


def run_git(command: list[str], timeout: float) -> str | None:
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=timeout,
            env=git_environment(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        log.warning("running git failed: %s", type(error).__name__)
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def tracked_paths(root: Path, timeout: float) -> frozenset[str]:
    """The files git tracks under ``root``, relative to it (empty outside a git work tree)."""
    output = run_git(["git", "-C", str(root), *GIT_OPTIONS, "ls-files", "-z"], timeout)
    return frozenset(path for path in (output or "").split("\0") if path)
