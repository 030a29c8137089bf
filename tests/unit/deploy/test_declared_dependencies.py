"""Each service and library installs alone, as its container does: every third-party module its
code imports is provided by a distribution it declares (directly, through a locus library it
declares, through an extra it declares, or as a requirement of one of those). The shared venv
of `make test` would hide a missing declaration (the gateway imported httpx, which only the
answer and retrieval services declared)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = sorted(
    [*ROOT.glob("libs/*/pyproject.toml"), *ROOT.glob("services/*/pyproject.toml")],
    key=str,
)
NAME = re.compile(r"^[A-Za-z0-9_.-]+")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = NAME.match(requirement.strip())
    assert match, requirement
    return normalized(match.group(0))


@cache
def local_packages() -> dict[str, dict[str, object]]:
    found = {}
    for path in PACKAGES:
        project = tomllib.loads(path.read_text())["project"]
        found[normalized(project["name"])] = {"path": path.parent, "project": project}
    return found


@cache
def installed_requirements(distribution: str) -> frozenset[str]:
    """The distributions an installed one requires (markers ignored: a superset is fine)."""
    try:
        requires = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return frozenset()
    return frozenset(requirement_name(r) for r in requires)


def declared_closure(package: str) -> set[str]:
    """Every distribution a package brings when installed alone, with all its extras."""
    pending, seen = [package], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        local = local_packages().get(name)
        if local is not None:
            project = local["project"]
            assert isinstance(project, dict)
            requirements = list(project.get("dependencies", []))
            for extra in project.get("optional-dependencies", {}).values():
                requirements += extra
            pending += [requirement_name(r) for r in requirements]
        else:
            pending += installed_requirements(name)
    return seen


def imported_modules(source_dir: Path) -> dict[str, str]:
    """Top-level absolute imports of the package's code → the first file importing each."""
    found: dict[str, str] = {}
    for path in sorted(source_dir.rglob("*.py")):
        if "_pb2" in path.name:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize(
    "package", sorted(local_packages()), ids=lambda name: name.removeprefix("locus-")
)
def test_every_imported_module_is_declared(package: str) -> None:
    providers = metadata.packages_distributions()
    closure = declared_closure(package)
    source = local_packages()[package]["path"]
    assert isinstance(source, Path)
    undeclared = {}
    for module, where in imported_modules(source / "src").items():
        if module in sys.stdlib_module_names or module in ("locus", "__future__"):
            continue
        distributions = {normalized(d) for d in providers.get(module, [])}
        assert distributions, f"{module} (imported in {where}) is not installed at all"
        if not distributions & closure:
            undeclared[module] = f"{where}; provided by {sorted(distributions)}"
    assert undeclared == {}, f"{package} imports modules it does not declare: {undeclared}"
