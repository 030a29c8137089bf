"""Per-language extraction report on real repositories: parse+extract throughput beside a bare
tree-sitter parse of the same files (same run, same process), and how much of what the files
reference resolves through the real ast store (SQLite): calls with a target symbol, imports
with a target file (per import line; C/C++ includes of the compiler's and the system's headers,
`<stdio.h>`, `<vector>`, are no imports of the project).

Usage: python bench/languages.py REPO_DIR LANGUAGE [REPO_DIR LANGUAGE ...] [--max-files N]
A REPO_DIR is a checkout (or `git archive` of one); files are taken by ingestion's language
detection, tests included, source roots detected as a scan would.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import tempfile
import time
from pathlib import Path

from baselines import ast_source_root
from tree_sitter import Parser
from tree_sitter_language_pack import get_language

from locus.ast.adapters.store import AstStore, FileVersion
from locus.ast.domain import extract
from locus.ast.domain.language_spec import SourceRoot
from locus.ast.domain.languages import language_spec
from locus.database import Database
from locus.ingestion.domain.languages import detect_language
from locus.ingestion.domain.source_roots import (
    SourceRoots,
    detect_source_roots,
    layout_files_to_read,
)

# A C++ project's headers are detected as C by ingestion (``.h`` is both) and parsed as C++ by
# ast's dialect check, as in a scan: a C++ report takes them too, or its includes could not resolve.
COMPANIONS = {"cpp": ("c",)}
# Languages whose files import each other's (`import { x } from './model'` in a .tsx names a .ts
# file): stored beside the reported language's files, as a scan stores them, so imports and calls
# resolve as they do in a project; not counted in the report's figures.
RESOLVED_WITH = {
    "javascript": ("typescript", "tsx"),
    "typescript": ("tsx", "javascript"),
    "tsx": ("typescript", "javascript"),
}


@functools.cache
def _repository(repo: Path) -> tuple[tuple[str, Path, str], ...]:
    """Every file of the checkout, walked once per run: (relative path, path, the language
    ingestion detects)."""
    return tuple(
        (relative, path, detect_language(relative, path.read_bytes()[:256]))
        for path in sorted(p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        for relative in (path.relative_to(repo).as_posix(),)
    )


@functools.cache
def _detected_roots(repo: Path) -> SourceRoots:
    """The checkout's source roots, detected once per run as a scan would."""
    every = [p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()]
    layout = {
        relative: (repo / relative).read_text(encoding="utf-8", errors="replace")
        for relative in layout_files_to_read(every)
    }
    return detect_source_roots(every, layout)


def files_of(repo: Path, language: str, limit: int) -> list[tuple[str, bytes, str]]:
    """(relative path, content, detected language) of the files a scan gives ``language``."""
    wanted = (language, *COMPANIONS.get(language, ()))
    found: list[tuple[str, bytes, str]] = []
    for relative, path, detected in _repository(repo):
        if detected == language or (detected in wanted and relative.endswith(".h")):
            found.append((relative, path.read_bytes(), detected))
            if limit and len(found) >= limit:
                break
    return found


def roots_of(repo: Path, paths: list[str], language: str) -> dict[str, SourceRoot]:
    detected = _detected_roots(repo)
    roots = {}
    for path in paths:
        root = detected.root_of(path, language)
        roots[path] = ast_source_root(root)
    return roots


async def report(repo: Path, language: str, limit: int) -> str:
    files = files_of(repo, language, limit)
    roots = roots_of(repo, [path for path, _, _ in files], language)
    size = sum(len(data) for _, data, _ in files)
    parser = Parser(get_language(language_spec(language).grammar))
    started = time.perf_counter()
    for _, data, _ in files:
        parser.parse(data)
    bare = time.perf_counter() - started
    analyses = {}
    started = time.perf_counter()
    for path, data, detected in files:
        try:
            analyses[path] = extract(path, data, detected, root=roots.get(path, SourceRoot()))
        except Exception as error:  # a report counts failures, it never stops
            print(f"  {path}: {error}")
    extracted = time.perf_counter() - started
    reported = set(analyses)
    for other in RESOLVED_WITH.get(language, ()):
        neighbours = files_of(repo, other, 0)
        other_roots = roots_of(repo, [path for path, _, _ in neighbours], other)
        for path, data, detected in neighbours:
            try:
                analyses[path] = extract(path, data, detected, root=other_roots[path])
            except Exception as error:
                print(f"  {path}: {error}")
    with tempfile.TemporaryDirectory() as directory:
        store = AstStore(Database(f"sqlite+aiosqlite:///{directory}/ast.db"))
        await store.initialize()
        versions = {}
        for index, (path, analysis) in enumerate(analyses.items()):
            versions[path] = FileVersion(
                file_id=f"f{index}",
                project_id="p",
                source_id="s",
                relative_path=path,
                sha256=f"{index:064d}",
                language=analysis.language,
                snapshot_id="snap",
                snapshot_seq=1,
                job_id="job",
            )
            await store.replace_file(versions[path], analysis, unsupported_language=False)
        calls = resolved_calls = imports = resolved_imports = 0
        for path in sorted(reported):
            index = await store.file_index(versions[path].file_id)
            assert index is not None
            for relation in index.relations:
                if relation.relation.kind == "calls":
                    calls += 1
                    resolved_calls += bool(relation.target_node_id)
            # One include or import per line (one that names several files counts once).
            by_line: dict[int, bool] = {}
            for dependency in index.dependencies:
                by_line[dependency.line] = by_line.get(dependency.line, False) or bool(
                    dependency.target_file_id
                )
            imports += len(by_line)
            resolved_imports += sum(by_line.values())
        await store.close()
    symbols = sum(len(analyses[path].symbols) for path in reported)
    mb = size / 1e6
    return (
        f"| {language} | {repo.name} | {len(files)} | {mb:.2f} | {mb / bare:.2f} | "
        f"{mb / extracted:.2f} | {symbols} | {_share(resolved_imports, imports)} | "
        f"{_share(resolved_calls, calls)} |"
    )


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} % of {whole}" if whole else "-"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="+", help="REPO_DIR LANGUAGE pairs")
    parser.add_argument("--max-files", type=int, default=0)
    arguments = parser.parse_args()
    if len(arguments.pairs) % 2:
        parser.error("give REPO_DIR LANGUAGE pairs")
    print(
        "| language | repository | files | MB | bare parse MB/s | parse+extract MB/s | symbols "
        "| imports resolved | calls resolved |\n|---|---|---|---|---|---|---|---|---|"
    )
    pairs = arguments.pairs
    for repo, language in zip(pairs[::2], pairs[1::2], strict=True):
        print(await report(Path(repo), language, arguments.max_files), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
