"""JavaScript (with JSX), TypeScript and TSX: module names are paths, imports are file specifiers.

A file's module is its path below the source root without the extension, `/index` dropped
(`src/api/index.ts` -> `src/api`, `src/api/client.ts` -> `src/api/client`); definitions are
qualified under it with `.` (`src/api/client.ApiClient.request`). A named package inside the
project (a workspace's `packages/ui/package.json` named `@acme/ui`) names its modules as an
importer writes them: `@acme/ui/src/button`, and its entry file (package.json's `source`,
`types`, `module`, `main` or `exports`, found by ingestion) is `@acme/ui` itself; the project's
top-level package keeps plain paths. Relative specifiers (`./a`, `../c/index.js`) resolve
against the importing file's directory; a tsconfig/jsconfig path alias (`@/*` -> `src/*`)
against the package's directory; the package's own name to its entry; other bare specifiers
(`react`, `@acme/ui/src/button`) stay as written, which names a workspace package's module.
"""

import dataclasses
from pathlib import PurePosixPath

from tree_sitter_language_pack import SupportedLanguage

from locus.ast.domain.language_spec import LanguageSpec, SourceRoot

# Longest first: `.d.ts` before `.ts`.
_SOURCE_SUFFIXES = (
    ".d.mts",
    ".d.cts",
    ".d.ts",
    ".mts",
    ".cts",
    ".tsx",
    ".ts",
    ".mjs",
    ".cjs",
    ".jsx",
    ".js",
)
_INDEX = "index"


def _strip_suffix(name: str) -> str:
    for suffix in _SOURCE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name.removesuffix(suffix)
    return name


def _module_from_segments(segments: list[str]) -> str:
    if segments:
        segments[-1] = _strip_suffix(segments[-1])
    if len(segments) > 1 and segments[-1] == _INDEX:
        segments.pop()
    return "/".join(segments) or _INDEX


def _path_module(relative_path: str, root: SourceRoot) -> str:
    path = PurePosixPath(root.relative(relative_path.replace("\\", "/")))
    segments = [segment for segment in path.parts if segment not in ("/", ".")]
    return _module_from_segments(segments)


def _is_workspace_package(root: SourceRoot) -> bool:
    """A named package below the project's top directory: its modules carry its name."""
    return bool(root.directory.strip("/") and root.name)


def _entry_module(root: SourceRoot) -> str | None:
    """The path module of the package's entry below its root (`src/index.ts` -> `src`)."""
    return _module_from_segments(root.entry.split("/")) if root.entry else None


def _named(path_module: str, root: SourceRoot) -> str:
    """A path module below the root as the package names it."""
    if path_module == _entry_module(root) and root.name:
        return root.name if _is_workspace_package(root) else path_module
    if not _is_workspace_package(root):
        return path_module
    # A top-level `index.js` that is not the entry stays apart from it (`@acme/ui/index`).
    return f"{root.name}/{path_module}"


def js_module_name(relative_path: str, root: SourceRoot) -> str:
    """`src/api/client.ts` -> `src/api/client`; `src/api/index.ts` -> `src/api`; a top-level
    `index.js` is `index`. Paths are taken below the source root (the package directory); a
    workspace package's (`@acme/ui`) are `@acme/ui/src/api/client`, its entry `@acme/ui`."""
    return _named(_path_module(relative_path, root), root)


def is_js_index_path(relative_path: str) -> bool:
    """`index.*` is its directory's module: its relative imports start from that directory."""
    name = PurePosixPath(relative_path.replace("\\", "/")).name
    return _strip_suffix(name) == _INDEX and name != _INDEX


def resolve_js_import(written: str, module_name: str, is_package: bool) -> str | None:
    """`./a` from `src/b` -> `src/a`; `../c/index.js` from `src/x/y` -> `src/c`; bare
    specifiers stay as written; None when a relative specifier climbs past the root."""
    if not _is_relative(written):
        return written or None
    return _resolve_relative(written, module_name, is_package)


def resolve_js_import_in_root(
    written: str, module_name: str, is_package: bool, root: SourceRoot
) -> str | None:
    """`resolve_js_import` in the importing file's package: a relative specifier from a
    workspace package's module (`@acme/ui/src/b`) resolves below the package and is named by
    it, or from the project's top when it climbs out of the package; a path alias (`@/api`
    with `@/*` -> `src/*`) resolves below the package, one into another package is named by
    that package; the package's own name (`import dayjs from 'dayjs'` inside dayjs) names its
    entry."""
    if _is_relative(written):
        path_module, own_is_package = _own_path_module(module_name, is_package, root)
        resolved = _resolve_relative(written, path_module, own_is_package)
        if resolved is not None:
            return _named(resolved, root)
        return _leaving_the_package(written, path_module, own_is_package, root)
    aliased = _through_alias(written, root)
    if aliased is not None:
        target, package = aliased
        if package is not None:  # a file of another package: named by that package
            return js_module_name(target, package)
        return _named(_module_from_segments(target.split("/")), root)
    if root.name and written == root.name:
        entry = _entry_module(root)
        if entry is not None:
            return _named(entry, root)
    return written or None


def _leaving_the_package(
    written: str, path_module: str, is_package: bool, root: SourceRoot
) -> str | None:
    """A relative specifier that climbs out of a package below the project's top, resolved
    from the project's top: a file outside every package is named by its path there
    (`../../shared/format` from `packages/app/src/main` -> `packages/shared/format`); one that
    comes back into the package is named by it. None when it leaves the project."""
    top = root.directory.strip("/")
    if not top:
        return None
    own = top if path_module == _INDEX and is_package else f"{top}/{path_module}"
    resolved = _resolve_relative(written, own, is_package)
    if resolved is not None and resolved.startswith(f"{top}/"):
        return _named(resolved.removeprefix(f"{top}/"), root)
    return resolved


def _is_relative(written: str) -> bool:
    return written in (".", "..") or written.startswith(("./", "../"))


def _own_path_module(module_name: str, is_package: bool, root: SourceRoot) -> tuple[str, bool]:
    """The importing file's module below its root, and whether it is an index."""
    if not _is_workspace_package(root):
        return module_name, is_package
    if module_name == root.name:
        entry = root.entry or f"{_INDEX}.js"
        return _module_from_segments(entry.split("/")), is_js_index_path(entry)
    return module_name.removeprefix(f"{root.name}/"), is_package


def _through_alias(written: str, root: SourceRoot) -> tuple[str, SourceRoot | None] | None:
    """The first target of the longest-prefix alias matching `written` (TypeScript's rule),
    `*` replaced by what it matched, with the other package it lies in (None: below `root`);
    None when no alias matches."""
    aliases: list[tuple[str, tuple[str, ...], SourceRoot | None]] = [
        (pattern, targets, None) for pattern, targets in root.aliases
    ]
    aliases += root.other_package_aliases
    best: tuple[int, str, SourceRoot | None] | None = None
    for pattern, targets, package in aliases:
        if not targets:
            continue
        prefix, star, suffix = pattern.partition("*")
        if not star:
            if written == pattern:
                return targets[0], package
            continue
        if (
            written.startswith(prefix)
            and written.endswith(suffix)
            and len(written) >= len(prefix) + len(suffix)
            and (best is None or len(prefix) > best[0])
        ):
            matched = written[len(prefix) : len(written) - len(suffix)]
            best = (len(prefix), targets[0].replace("*", matched, 1), package)
    return None if best is None else (best[1], best[2])


def _resolve_relative(written: str, module_name: str, is_package: bool) -> str | None:
    if is_package:
        directory = [] if module_name == _INDEX else module_name.split("/")
    else:
        directory = module_name.split("/")[:-1]
    segments = list(directory)
    for part in written.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not segments:
                return None
            segments.pop()
        else:
            segments.append(part)
    return _module_from_segments(segments)


def _spec(name: str, grammar: SupportedLanguage) -> LanguageSpec:
    return LanguageSpec(
        name=name,
        grammar=grammar,
        module_name_for_path=js_module_name,
        is_package_path=is_js_index_path,
        resolve_import=resolve_js_import,
        resolve_import_in_root=resolve_js_import_in_root,
        separator=".",
        instance_receivers=frozenset({"this"}),
        comment_node_types=frozenset({"comment"}),
        atomic_node_types=frozenset({"string", "template_string", "regex"}),
        # `handler = (e) =>`, `api = {`, `nested: {`: the header without its trailing token.
        signature_terminators=frozenset({"=>", "=", ":"}),
        doc_comment_prefixes=("/**",),
        # TypeScript keeps a member's decorators as siblings before it in the class body.
        doc_skip_node_types=frozenset({"decorator"}),
    )


JAVASCRIPT = _spec("javascript", "javascript")
TYPESCRIPT = _spec("typescript", "typescript")
# TSX is TypeScript's grammar with JSX: TypeScript's queries, JavaScript's JSX-aware calls.
TSX = dataclasses.replace(
    _spec("tsx", "tsx"),
    query_sources={
        "definitions": "typescript",
        "imports": "typescript",
        "inheritance": "typescript",
        "calls": "javascript",
        "locals": "typescript",
    },
)

SPECS = (JAVASCRIPT, TYPESCRIPT, TSX)
