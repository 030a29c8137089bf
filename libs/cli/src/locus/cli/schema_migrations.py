"""`locus migrate`: upgrade the schema of each installed service's store. Each runs in its own
process (``python -m locus.<service>.migrate``), with the environment that service reads, so
the database is the one its settings name: LOCUS_<SERVICE>_DATABASE_URL, else the SQLite file
under its data dir (``<data-dir>/<service>``, as `locus up` lays it out, unless set)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.local_stack import SERVICE_ORDER

MIGRATE_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True)
class StoreMigration:
    store: str
    before: str = ""
    after: str = ""
    error: str = ""


def services_with_stores() -> list[str]:
    """Installed services that keep a database (they ship ``locus.<name>.migrate``)."""
    return [name for name in SERVICE_ORDER if _has_module(f"locus.{name}.migrate")]


def stores_to_migrate(requested: Sequence[str]) -> list[str]:
    """The requested services (every installed one with a store when none are), in stack
    order; a service without a store here is a usage error."""
    available = services_with_stores()
    if not available:
        raise CliError(
            "no service with a store is installed in this environment; run `make setup`",
            ExitCode.USAGE,
        )
    unknown = sorted(set(requested) - set(available))
    if unknown:
        raise CliError(
            f"no store to migrate for {', '.join(unknown)}; choose from {', '.join(available)}",
            ExitCode.USAGE,
        )
    return [name for name in available if name in requested or not requested]


def migration_environment(
    name: str, data_dir: Path, inherited: Mapping[str, str]
) -> dict[str, str]:
    env = dict(inherited)
    env.setdefault(f"LOCUS_{name.upper()}_DATA_DIR", str(data_dir / name))
    return env


def migrate_store(name: str, data_dir: Path, inherited: Mapping[str, str]) -> StoreMigration:
    try:
        result = subprocess.run(
            [sys.executable, "-m", f"locus.{name}.migrate"],
            capture_output=True,
            text=True,
            env=migration_environment(name, data_dir, inherited),
            timeout=MIGRATE_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return StoreMigration(name, error=f"no answer within {MIGRATE_TIMEOUT_SECONDS:.0f} s")
    lines = result.stdout.strip().splitlines()
    try:
        reported = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        reported = {}
    if result.returncode == 0 and "after" in reported:
        return StoreMigration(name, reported["before"], reported["after"])
    error = reported.get("error") or _last_line(result.stderr) or f"exit {result.returncode}"
    return StoreMigration(name, error=error)


def migrate_stores(
    names: Sequence[str], data_dir: Path, inherited: Mapping[str, str]
) -> list[StoreMigration]:
    return [migrate_store(name, data_dir, inherited) for name in names]


def _has_module(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except Exception:  # a half-built package may fail to import: nothing to migrate there
        return False


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""
