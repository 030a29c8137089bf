"""JavaScript (with JSX), TypeScript and TSX: module names are paths, imports are file specifiers.

A file's module is its path below the source root without the extension, `/index` dropped
(`src/api/index.ts` -> `src/api`, `src/api/client.ts` -> `src/api/client`); definitions are
qualified under it with `.` (`src/api/client.ApiClient.request`). Relative specifiers
(`./a`, `../c/index.js`) resolve against the importing file's directory to such a module
name; bare specifiers (`react`, `@scope/pkg/sub`) are packages and stay as written.
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


def js_module_name(relative_path: str, root: SourceRoot) -> str:
    """`src/api/client.ts` -> `src/api/client`; `src/api/index.ts` -> `src/api`; a top-level
    `index.js` is `index`. Paths are taken below the source root (the package directory)."""
    path = PurePosixPath(root.relative(relative_path.replace("\\", "/")))
    segments = [segment for segment in path.parts if segment not in ("/", ".")]
    return _module_from_segments(segments)


def is_js_index_path(relative_path: str) -> bool:
    """`index.*` is its directory's module: its relative imports start from that directory."""
    name = PurePosixPath(relative_path.replace("\\", "/")).name
    return _strip_suffix(name) == _INDEX and name != _INDEX


def resolve_js_import(written: str, module_name: str, is_package: bool) -> str | None:
    """`./a` from `src/b` -> `src/a`; `../c/index.js` from `src/x/y` -> `src/c`; bare
    specifiers stay as written; None when a relative specifier climbs past the root."""
    if written != "." and written != ".." and not written.startswith(("./", "../")):
        return written or None
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
    },
)

SPECS = (JAVASCRIPT, TYPESCRIPT, TSX)
