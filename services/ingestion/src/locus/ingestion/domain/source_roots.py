"""Source roots inside a scanned source: where each file's module naming starts (`libs/cli/src`,
`src/main/java`, the directory of a `go.mod` or `Cargo.toml`) and the name that root stands for
(Go module path, crate or package name), detected from paths and a few layout files' contents.

Not to be confused with a registered source's directory (`source_paths.resolve_source_root`):
these roots are directories *inside* one source, relative to it. A layout file that cannot be
parsed is logged and ignored; detection never fails a scan.
"""

from __future__ import annotations

import configparser
import json
import logging
import posixpath
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

log = logging.getLogger(__name__)


Aliases = tuple[tuple[str, tuple[str, ...]], ...]  # pattern → targets, first target first


@dataclass(frozen=True, slots=True)
class SourceRoot:
    """A directory relative to the source ("" = the source itself) and the name it stands for
    ("" where the language names modules from directories alone). JS/TS packages also carry
    their entry file below the directory (what a bare import of the package names) and their
    tsconfig/jsconfig path aliases (pattern → targets below the directory)."""

    directory: str = ""
    name: str = ""
    entry: str = ""
    aliases: Aliases = ()
    # Aliases whose targets are files of another package of the project (an alias to a
    # sibling's sources): targets relative to the project, named by that package's root.
    package_aliases: tuple[PackageAlias, ...] = ()


@dataclass(frozen=True, slots=True)
class PackageAlias:
    """An import alias into another package: `@acme/ui` → `packages/ui/src/index.ts`, a module
    that package names (`@acme/ui`, its entry)."""

    pattern: str
    targets: tuple[str, ...]  # relative to the project
    root: SourceRoot  # the package's directory, name and entry


NO_SOURCE_ROOT = SourceRoot()

PYTHON_PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
# Layout files whose contents detection reads; every other marker is recognised by its path.
TS_CONFIG_FILES = ("tsconfig.json", "jsconfig.json")
CONTENT_LAYOUT_FILES = frozenset(
    {
        *PYTHON_PROJECT_FILES,
        *TS_CONFIG_FILES,
        "go.mod",
        "Cargo.toml",
        "package.json",
        "composer.json",
    }
)
MAX_LAYOUT_FILE_BYTES = 256 * 1024

_PYTHON_SUFFIXES = (".py", ".pyi")
_JVM_SOURCE_DIRECTORIES = frozenset({"java", "kotlin", "scala", "groovy"})
_FAMILIES = {
    "python": "python",
    "java": "jvm",
    "kotlin": "jvm",
    "scala": "jvm",
    "groovy": "jvm",
    "go": "go",
    "rust": "rust",
    "javascript": "node",
    "typescript": "node",
    "tsx": "node",
    "csharp": "dotnet",
    "php": "php",
    "ruby": "ruby",
}
# `module example.com/shop` or `module "example.com/shop"`, comments allowed after it.
_GO_MODULE = re.compile(r'^\s*module\s+"?([^\s"]+)"?\s*(?://.*)?$', re.MULTILINE)
# What parsing a malformed layout file raises (TOML and JSON decode errors are ValueErrors;
# deeply nested documents exhaust the recursion limit).
_LAYOUT_ERRORS = (ValueError, RecursionError, configparser.Error)
_SETUP_CALL = re.compile(r"\bsetup\s*\(")
_SETUP_PACKAGE_DIR = re.compile(r"""package_dir\s*=\s*\{\s*(['"])\1\s*:\s*(['"])([^'"]+)\2""")
_SETUP_WHERE = re.compile(r"""\bwhere\s*=\s*\[?\s*(['"])([^'"]+)\1""")


class SourceRoots:
    """Per language family, the detected root directories; `root_of` picks a file's nearest."""

    def __init__(
        self,
        roots_by_family: Mapping[str, Mapping[str, SourceRoot]],
        alias_scopes: Mapping[str, Aliases] | None = None,
    ) -> None:
        self._roots = roots_by_family
        # JS/TS: per directory holding a tsconfig.json (else jsconfig.json), its aliases with
        # targets relative to the project; a file takes its nearest above it, as tsc does.
        self._alias_scopes = alias_scopes or {}
        self._aliases: dict[tuple[str, str], tuple[Aliases, tuple[PackageAlias, ...]]] = {}

    def root_of(self, relative_path: str, language: str) -> SourceRoot:
        """The nearest detected root above `relative_path` for its language; NO_SOURCE_ROOT
        when there is none (or the language has no root convention: C, C++, ...). A JS/TS
        file's root carries the aliases of its nearest tsconfig, below the root."""
        family = _FAMILIES.get(language)
        if family == "jvm":
            return _jvm_root(relative_path)
        root = _nearest(self._roots.get(family or "", {}), relative_path) or NO_SOURCE_ROOT
        if family != "node":
            return root
        scope = _nearest_directory(self._alias_scopes, relative_path)
        if scope is None:
            return root
        key = (root.directory, scope)
        if key not in self._aliases:
            self._aliases[key] = self._split_aliases(root.directory, self._alias_scopes[scope])
        own, other = self._aliases[key]
        return replace(root, aliases=own, package_aliases=other) if own or other else root

    def _split_aliases(
        self, directory: str, aliases: Aliases
    ) -> tuple[Aliases, tuple[PackageAlias, ...]]:
        """``aliases`` (targets relative to the project) for a file of the package at
        ``directory``: those whose first target is below it (targets relative to it), and those
        whose first target is in another package (a `*` only in the last segment, so the
        package is known). A target leaving the project is dropped, as is an alias left
        without targets."""
        packages = self._roots.get("node", {})

        def owner(target: str) -> str | None:
            """The directory of the package holding ``target``; None when a `*` in its
            directories leaves that open."""
            if "*" in _parent(target):
                return None
            return (_nearest(packages, target) or NO_SOURCE_ROOT).directory

        own: list[tuple[str, tuple[str, ...]]] = []
        other: list[PackageAlias] = []
        for pattern, targets in aliases:
            first = owner(targets[0])
            if first is None or first == directory:
                # A target that is the directory itself names no module below it.
                below = (_below(directory, t) for t in targets if owner(t) in (None, directory))
                kept = tuple(t for t in below if t is not None and t != ".")
                if kept:
                    own.append((pattern, kept))
                continue
            package = _nearest(packages, targets[0]) or NO_SOURCE_ROOT
            same = tuple(t for t in targets if owner(t) == first)
            other.append(
                PackageAlias(
                    pattern, same, SourceRoot(package.directory, package.name, package.entry)
                )
            )
        return tuple(own), tuple(other)


def _nearest(by_directory: Mapping[str, SourceRoot], relative_path: str) -> SourceRoot | None:
    directory = _nearest_directory(by_directory, relative_path)
    return None if directory is None else by_directory[directory]


def _nearest_directory(directories: Mapping[str, object], relative_path: str) -> str | None:
    """The nearest of ``directories`` above ``relative_path`` ("" = the project's top)."""
    if not directories:
        return None
    directory = _parent(relative_path)
    while True:
        if directory in directories:
            return directory
        if not directory:
            return None
        directory = _parent(directory)


def layout_files_to_read(paths: Iterable[str]) -> list[str]:
    """The paths among `paths` whose contents `detect_source_roots` needs."""
    return sorted(path for path in paths if _is_content_layout_file(_name(path)))


def _is_content_layout_file(name: str) -> bool:
    """A layout file whose contents detection reads; `tsconfig.base.json` and the like are
    what a tsconfig.json `extends`."""
    return name in CONTENT_LAYOUT_FILES or (name.startswith("tsconfig.") and name.endswith(".json"))


def may_move_roots(path: str, added_or_deleted: bool) -> bool:
    """Whether a change of ``path`` can change the detected roots: a file that comes or goes
    (src/ layouts, markers, package entries are found by path), or a new version of a layout
    file whose contents detection reads."""
    return added_or_deleted or _is_content_layout_file(_name(path))


def rerooted_paths(
    before: SourceRoots, after: SourceRoots, unchanged: Mapping[str, str]
) -> list[str]:
    """The paths of ``unchanged`` (path → language) whose root differs between two layouts:
    their content is the same, but the names their modules get are not."""
    return sorted(
        path
        for path, language in unchanged.items()
        if before.root_of(path, language) != after.root_of(path, language)
    )


def detect_source_roots(paths: Iterable[str], layout_files: Mapping[str, str]) -> SourceRoots:
    """Roots of every language family from a snapshot's relative paths (POSIX) and the
    contents of its layout files (`layout_files_to_read`; a missing one is skipped)."""
    all_paths = sorted(set(paths))
    directories = _directories_of_files(all_paths)
    return SourceRoots(
        {
            "python": _python_roots(all_paths, directories, layout_files),
            "go": _named_roots(layout_files, "go.mod", _go_module_name, require_name=True),
            "rust": _named_roots(layout_files, "Cargo.toml", _crate_name, require_name=True),
            "node": _node_roots(all_paths, layout_files),
            "php": _named_roots(layout_files, "composer.json", _json_name, require_name=False),
            "dotnet": _marker_roots(all_paths, lambda name: name.endswith(".csproj")),
            "ruby": _marker_roots(
                all_paths, lambda name: name == "Gemfile" or name.endswith(".gemspec")
            ),
        },
        _alias_scopes(set(all_paths), layout_files),
    )


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _join(directory: str, child: str) -> str:
    child = str(PurePosixPath(child.strip().replace("\\", "/")))
    if child in ("", "."):
        return directory
    if child.startswith("/") or child == ".." or child.startswith("../"):
        raise ValueError(f"{child!r} leaves the project directory")
    return f"{directory}/{child}" if directory else child


def _directories_of_files(paths: list[str]) -> dict[str, set[str]]:
    """Directory → names of the files directly in it."""
    directories: dict[str, set[str]] = {}
    for path in paths:
        directories.setdefault(_parent(path), set()).add(_name(path))
    return directories


# JVM: Maven/Gradle source sets, at any depth (modules of a monorepo).


def _jvm_root(relative_path: str) -> SourceRoot:
    """`<module>/src/<set>/<java|kotlin|scala|groovy>/...`: the deepest such prefix."""
    segments = relative_path.split("/")[:-1]
    for index in range(len(segments) - 3, -1, -1):
        if segments[index] == "src" and segments[index + 2] in _JVM_SOURCE_DIRECTORIES:
            return SourceRoot("/".join(segments[: index + 3]))
    return NO_SOURCE_ROOT


# Python: project files' declared package directories, and `src/` layouts.


def _python_roots(
    paths: list[str], directories: Mapping[str, set[str]], layout_files: Mapping[str, str]
) -> dict[str, SourceRoot]:
    roots: dict[str, SourceRoot] = {}
    for directory in _src_layout_directories(paths, directories):
        roots[directory] = SourceRoot(directory)
    for path in sorted(layout_files):
        name = _name(path)
        if name not in PYTHON_PROJECT_FILES:
            continue
        project = _parent(path)
        try:
            declared = _declared_package_directories(name, layout_files[path])
            if declared is None:
                continue
            found = [_join(project, directory) for directory in declared]
        except _LAYOUT_ERRORS as error:  # ValueError included: a directory leaving the project
            log.warning("ignoring %s for source roots: %s", path, error)
            continue
        if not found:
            # A project without a declared directory: `src/` when it has one, else flat.
            src = _join(project, "src")
            flat = "__init__.py" not in directories.get(project, set())
            found = [src] if src in roots else [project] if flat else []
        for directory in found:
            roots.setdefault(directory, SourceRoot(directory))
    return roots


def _src_layout_directories(paths: list[str], directories: Mapping[str, set[str]]) -> set[str]:
    """Directories named `src` that hold a Python package (a Python file at least one
    directory below) and are not a package themselves (no `src/__init__.py`)."""
    found: set[str] = set()
    for path in paths:
        if not path.endswith(_PYTHON_SUFFIXES):
            continue
        segments = path.split("/")
        for index in range(len(segments) - 3, -1, -1):
            if segments[index] != "src":
                continue
            src = "/".join(segments[: index + 1])
            if "__init__.py" not in directories.get(src, set()):
                found.add(src)
                break
    return found


def _declared_package_directories(file_name: str, text: str) -> list[str] | None:
    """Package directories a Python project file declares, relative to it: [] for a project
    that declares none, None when the file describes no Python project."""
    if file_name == "pyproject.toml":
        return _pyproject_package_directories(tomllib.loads(text))
    if file_name == "setup.cfg":
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        if not parser.has_section("options") and not parser.has_section("metadata"):
            return None
        directories = []
        package_dir = parser.get("options", "package_dir", fallback="").strip()
        for line in package_dir.splitlines():
            key, _, value = line.partition("=")
            if not key.strip() and value.strip():
                directories.append(value.strip())
        where = parser.get("options.packages.find", "where", fallback="").strip()
        if where:
            directories.append(where)
        return directories
    # setup.py is a project file only when it calls setuptools' (or distutils') setup: a
    # module that happens to be named setup.py (`locus/telemetry/setup.py`) is not.
    if not ("setuptools" in text or "distutils" in text) or not _SETUP_CALL.search(text):
        return None
    directories = [match.group(3) for match in _SETUP_PACKAGE_DIR.finditer(text)]
    directories.extend(match.group(2) for match in _SETUP_WHERE.finditer(text))
    return directories


def _pyproject_package_directories(document: dict[str, Any]) -> list[str] | None:
    tool = _table(document.get("tool"))
    poetry = _table(tool.get("poetry"))
    if "project" not in document and "build-system" not in document and not poetry:
        return None  # tool configuration only (ruff, mypy, pytest)
    directories: list[str] = []
    setuptools = _table(tool.get("setuptools"))
    package_dir = _table(setuptools.get("package-dir"))
    if isinstance(package_dir.get(""), str):
        directories.append(package_dir[""])
    directories.extend(_strings(_nested(setuptools, "packages", "find").get("where")))
    wheel = _nested(tool, "hatch", "build", "targets", "wheel")
    # Hatch lists package paths (`src/locus`): their parent is the root.
    directories.extend(
        _parent(package.rstrip("/")) or "." for package in _strings(wheel.get("packages"))
    )
    poetry_packages = poetry.get("packages")
    for entry in poetry_packages if isinstance(poetry_packages, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("from"), str):
            directories.append(entry["from"])
    return list(dict.fromkeys(directories))


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _nested(table: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        table = _table(table.get(key))
    return table


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


# Roots named by a layout file (Go, Rust, JS/TS, PHP) or marked by a file's presence (C#, Ruby).


def _named_roots(
    layout_files: Mapping[str, str],
    file_name: str,
    name_of: Callable[[str], str],
    *,
    require_name: bool,
) -> dict[str, SourceRoot]:
    roots: dict[str, SourceRoot] = {}
    for path, text in layout_files.items():
        if _name(path) != file_name:
            continue
        try:
            name = name_of(text)
        except _LAYOUT_ERRORS as error:
            log.warning("ignoring %s for source roots: %s", path, error)
            if require_name:
                continue
            name = ""
        if name or not require_name:
            roots[_parent(path)] = SourceRoot(_parent(path), name)
    return roots


def _marker_roots(paths: list[str], is_marker: Callable[[str], bool]) -> dict[str, SourceRoot]:
    """Directories holding a marker file; named by the first (sorted) marker with a stem
    (`Billing.csproj` → "Billing", `shop.gemspec` → "shop", `Gemfile` → "")."""
    roots: dict[str, SourceRoot] = {}
    for path in paths:
        name = _name(path)
        if not is_marker(name):
            continue
        directory, stem = _parent(path), name.rpartition(".")[0]
        if directory not in roots or (stem and not roots[directory].name):
            roots[directory] = SourceRoot(directory, stem)
    return roots


def _go_module_name(text: str) -> str:
    match = _GO_MODULE.search(text)
    if match is None:
        raise ValueError("no module directive")
    return match.group(1)


def _crate_name(text: str) -> str:
    """The `[package]` name with `-` as `_` (how Rust code writes it); "" for a workspace."""
    package = _table(tomllib.loads(text).get("package"))
    name = package.get("name")
    return name.replace("-", "_") if isinstance(name, str) else ""


def _json_name(text: str) -> str:
    return _declared_name(_json_object(text))


def _declared_name(document: dict[str, Any]) -> str:
    """A package.json's or composer.json's `name` ("" when it has none)."""
    name = document.get("name")
    return name.strip() if isinstance(name, str) else ""


# JS/TS packages: package.json's name and entry, tsconfig.json / jsconfig.json path aliases.

# Where a package's entry may be declared, the most source-like first.
_ENTRY_FIELDS = ("source", "types", "typings", "module", "main")
_EXPORT_CONDITIONS = ("source", "types", "import", "module", "require", "node", "default")
# A build's output directories, mapped back to the sources they are built from.
_BUILD_DIRECTORIES = frozenset({"dist", "build", "lib", "out", "es", "esm", "cjs", "types"})
_JS_SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
_JSONC_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[\]}])', re.DOTALL)


def _node_roots(paths: list[str], layout_files: Mapping[str, str]) -> dict[str, SourceRoot]:
    """Every package.json's directory, with its name and its entry (an existing file)."""
    present = set(paths)
    roots: dict[str, SourceRoot] = {}
    for path, text in layout_files.items():
        if _name(path) != "package.json":
            continue
        directory = _parent(path)
        try:
            document = _json_object(text)
        except _LAYOUT_ERRORS as error:
            log.warning("ignoring %s for source roots: %s", path, error)
            roots[directory] = SourceRoot(directory)
            continue
        roots[directory] = SourceRoot(
            directory, _declared_name(document), _package_entry(document, directory, present)
        )
    return roots


def _json_object(text: str) -> dict[str, Any]:
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def _package_entry(document: dict[str, Any], directory: str, present: set[str]) -> str:
    """The first declared entry that is a file of the package, or the source a declared build
    output is built from (`dist/index.js` → `src/index.ts`); else `src/index.*` or `index.*`;
    "" when there is none. Relative to the package's directory."""
    declared = [document.get(field) for field in _ENTRY_FIELDS]
    declared += _export_entries(document.get("exports"))
    for value in declared:
        if not isinstance(value, str) or not value.strip():
            continue
        try:
            written = _join("", value)
        except ValueError:
            continue
        for candidate in _entry_candidates(written):
            if _join(directory, candidate) in present:
                return candidate
    for fallback in ("src/index", "index"):
        for suffix in _JS_SOURCE_SUFFIXES:
            if _join(directory, fallback + suffix) in present:
                return fallback + suffix
    return ""


def _export_entries(exports: object, depth: int = 0) -> list[str]:
    """The `.` entry of an `exports` field: the string, or every string of its conditions
    (nested ones too), in the order `_EXPORT_CONDITIONS` prefers."""
    if depth == 0 and isinstance(exports, dict) and any(k.startswith(".") for k in exports):
        exports = exports.get(".")
    if isinstance(exports, str):
        return [exports]
    if not isinstance(exports, dict) or depth > 4:
        return []
    return [
        entry
        for condition in _EXPORT_CONDITIONS
        for entry in _export_entries(exports.get(condition), depth + 1)
    ]


def _entry_candidates(written: str) -> list[str]:
    """`dist/index.js` → itself, then `src/index` with each source suffix, then `index.*`
    (the output directory dropped); a declaration file's stem the same way."""
    stem = _strip_js_suffix(written)
    candidates = [written] if not written.endswith(_DECLARATION_SUFFIXES) else []
    first, _, rest = stem.partition("/")
    stems = [stem]
    if rest and first in _BUILD_DIRECTORIES:
        stems += [f"src/{rest}", rest]
    candidates += [f"{s}{suffix}" for s in stems for suffix in _JS_SOURCE_SUFFIXES]
    candidates += [f"{s}/index{suffix}" for s in stems for suffix in _JS_SOURCE_SUFFIXES]
    return candidates


def _alias_scopes(present: set[str], layout_files: Mapping[str, str]) -> dict[str, Aliases]:
    """Per directory holding a tsconfig.json (else jsconfig.json), the import aliases tsc reads
    there, targets relative to the project: `compilerOptions.paths` (through `baseUrl`), then,
    where `baseUrl` is set, each top-level source file or directory below it (`import x from
    'components/button'` with `baseUrl: "src"`). Options come through a chain of relative
    `extends`, each relative to the config that sets it (an Nx project's tsconfig.json extends
    the root's tsconfig.base.json). tsconfig files are JSON with comments and trailing commas."""
    scopes: dict[str, Aliases] = {}
    for path in sorted(layout_files):
        directory, name = _parent(path), _name(path)
        if name not in TS_CONFIG_FILES or directory in scopes:
            continue
        config = _join(directory, TS_CONFIG_FILES[0])
        if config not in layout_files:  # tsconfig.json wins over jsconfig.json beside it
            config = path
        try:
            options = _compiler_options(config, layout_files)
        except _LAYOUT_ERRORS as error:  # a baseUrl or extends leaving the project included
            log.warning("ignoring %s for import aliases: %s", config, error)
            scopes[directory] = ()
            continue
        base_url = options.get("baseUrl")
        paths = options.get("paths")
        aliases: list[tuple[str, tuple[str, ...]]] = []
        if paths is not None:
            # Targets are relative to baseUrl, else to the config that sets `paths`.
            base = base_url[0] if base_url is not None else paths[0]
            for pattern, targets in _table(paths[1]).items():
                resolved = []
                for target in (written.strip() for written in _strings(targets)):
                    joined = posixpath.normpath(f"{base or '.'}/{target}")
                    if not (target.startswith("/") or joined == ".." or joined[:3] == "../"):
                        resolved.append("" if joined == "." else joined)
                if pattern.count("*") <= 1 and resolved:
                    aliases.append((pattern, tuple(resolved)))
        if base_url is not None:
            taken = {pattern for pattern, _ in aliases}
            aliases += [
                alias for alias in _base_url_aliases(base_url[0], present) if alias[0] not in taken
            ]
        scopes[directory] = tuple(aliases)
    return scopes


def _compiler_options(
    config: str, layout_files: Mapping[str, str], depth: int = 0
) -> dict[str, tuple[str, Any]]:
    """`baseUrl` (resolved, relative to the project) and `paths` of a tsconfig after its chain
    of relative `extends` (the nearer config wins), each with the directory it is relative to:
    option → (directory, value)."""
    document = _json_object(_without_comments(layout_files[config]))
    options: dict[str, tuple[str, Any]] = {}
    extends = document.get("extends")
    if isinstance(extends, str) and extends.startswith(("./", "../")) and depth < 5:
        parent = posixpath.normpath(f"{_parent(config) or '.'}/{extends}")
        if not parent.endswith(".json"):
            parent += ".json"
        if parent in layout_files:
            options = _compiler_options(parent, layout_files, depth + 1)
    here = _parent(config)
    compiler = _table(document.get("compilerOptions"))
    if isinstance(compiler.get("baseUrl"), str):
        resolved = posixpath.normpath(f"{here or '.'}/{compiler['baseUrl'].strip()}")
        if resolved == ".." or resolved.startswith("../"):
            raise ValueError(f"baseUrl {compiler['baseUrl']!r} leaves the project directory")
        options["baseUrl"] = ("" if resolved == "." else resolved, None)
    if "paths" in compiler:
        options["paths"] = (here, compiler["paths"])
    return options


def _below(directory: str, path: str) -> str | None:
    """``path`` (relative to the project) relative to ``directory``; None outside it."""
    path = "" if path == "." else path
    if not directory:
        return None if path == ".." or path.startswith("../") else path or "."
    if path == directory:
        return "."
    return path.removeprefix(f"{directory}/") if path.startswith(f"{directory}/") else None


_MAX_BASE_URL_ALIASES = 200
_NOT_BELOW_BASE_URL = frozenset({"node_modules", "dist", "build", "out"})  # not sources


def _base_url_aliases(base: str, present: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    """A bare specifier resolves below `baseUrl` too: each top-level source file (`utils`) and
    directory holding sources (`components`, `components/*`) below it, in name order; targets
    relative to the project."""
    prefix = f"{base}/" if base else ""
    files: set[str] = set()
    directories: set[str] = set()
    for path in present:
        if not path.startswith(prefix) or not path.endswith(_JS_SOURCE_SUFFIXES):
            continue
        first, slash, _ = path[len(prefix) :].partition("/")
        if first in _NOT_BELOW_BASE_URL or first.startswith("."):
            continue
        if slash:
            directories.add(first)
        elif not path.endswith(_DECLARATION_SUFFIXES):
            files.add(first)
    aliases: list[tuple[str, tuple[str, ...]]] = []
    for name in sorted(directories):
        aliases += [(f"{name}/*", (f"{prefix}{name}/*",)), (name, (f"{prefix}{name}",))]
    for name in sorted(files):
        aliases.append((_strip_js_suffix(name), (f"{prefix}{name}",)))
    return aliases[:_MAX_BASE_URL_ALIASES]


def _strip_js_suffix(name: str) -> str:
    """`index.d.ts` → `index`, `utils.js` → `utils`; anything else as it is."""
    for suffix in (*_DECLARATION_SUFFIXES, *_JS_SOURCE_SUFFIXES):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def _without_comments(text: str) -> str:
    """JSON with comments and trailing commas (tsconfig's dialect) as plain JSON."""
    return _JSONC_TOKENS.sub(
        lambda match: match.group(0) if match.group(0).startswith('"') else "", text
    )
