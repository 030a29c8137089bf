"""Add retrieval's whole-file list to candidate dumps collected before it existed.

A dump (``collect.sh``) holds everything Locate ranked for one instance. Dumps made before the
whole-file index lack its list (``whole_file_hits``); this script makes it the way the stack
does, in one process: the tree at the instance's base commit (the harness's own work tree,
``.locbench/repos``, checked out as the collection run had it), walked by the ingestion
scanner, each file cut into chunks by the ast service's extraction, each file's chunks joined
into its whole-file document (``locus.retrieval.domain.model.whole_file``), indexed by the
retrieval service's own tantivy adapter and searched with the dumped question (the query
Locate sends). File ids are the dump's own where the dump knows the path; a file it never saw
gets an id of its own (it is a new candidate, as it would be in the stack).

The same index answers each part of the question (``question_parts``: its title and its
opening) as Locate searches them (``whole_file_parts``).

Chunks are cached per (path, sha256) across the instances of a repository, so a repository is
parsed once and then only its changed files. Dumps that already have every list are skipped;
a dump with the question's list but not the parts' gets only the parts'; ``--force`` makes
all of them again.

Usage: python bench/ranker/whole_files.py --candidates DIR --split FILE --mirror-root DIR
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from locus.ast.settings import AstSettings
from locus.gateway.domain.question_parts import question_parts
from locus.gateway.domain.ranking_types import FileMatch
from locus.gateway.settings import GatewaySettings
from locus.ingestion.domain.model import ScannedFile
from locus.ingestion.domain.scanner import walk_source
from locus.ingestion.domain.source_roots import (
    MAX_LAYOUT_FILE_BYTES,
    SourceRoot,
    SourceRoots,
    detect_source_roots,
    layout_files_to_read,
)
from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
from locus.retrieval.domain.model import ChunkFilter, IndexedChunk, WholeFile, whole_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from baselines import (  # noqa: E402
    MAX_FILE_BYTES,
    PROJECT,
    ast_source_root,
    chunks_of,
    indexed_chunks,
)
from dumps import arguments, read_dump, split_rows, write_dump  # noqa: E402

WHOLE_FILES = GatewaySettings.model_fields["search_whole_files"].default
# A file's chunks depend on its path, its content and the source root it is named from.
ChunkKey = tuple[str, str, SourceRoot]


def dump_file_ids(candidates: dict[str, Any]) -> dict[str, str]:
    """path -> file id, as the stack named the files the dump mentions."""
    ids: dict[str, str] = {}
    fields = candidates["symbol_fields"]
    for values in candidates["symbols"].values():
        row = dict(zip(fields, values, strict=True))
        ids[row["relative_path"]] = row["file_id"]
    chunk_fields = candidates["chunk_fields"]
    for values in candidates["chunks"]:
        row = dict(zip(chunk_fields, values[:-1], strict=True))
        ids[row["relative_path"]] = row["file_id"]
    file_fields = candidates["file_fields"]
    for values in candidates.get("file_hits", []):
        row = dict(zip(file_fields, values, strict=True))
        ids[row["relative_path"]] = row["file_id"]
    return ids


def file_id_of(ids: dict[str, str], path: str) -> str:
    """The dump's id of ``path``; a file the dump never saw gets an id of its own."""
    return ids.get(path) or "f_" + hashlib.sha256(("whole-file\0" + path).encode()).hexdigest()[:30]


def tree_chunks(
    tree: Path, cache: dict[ChunkKey, list[IndexedChunk]], settings: AstSettings
) -> list[list[IndexedChunk]]:
    """Each indexed file's chunks, as the scanner walks ``tree``, ingestion names its source
    roots and the ast service cuts them (``cache``: by path, sha256 and root, kept to this
    tree's files)."""
    items = [
        item
        for item in walk_source(tree, max_file_bytes=MAX_FILE_BYTES)
        if isinstance(item, ScannedFile)
    ]
    roots = source_roots(items)
    found = []
    used: set[ChunkKey] = set()
    for item in items:
        root = roots.root_of(item.relative_path, item.language or "")
        key = (item.relative_path, item.sha256, root)  # every field of the root counts
        used.add(key)
        if key not in cache:
            source_root = ast_source_root(root)
            cache[key] = indexed_chunks(item, chunks_of(item, settings, source_root))
        if cache[key]:
            found.append(cache[key])
    for key in cache.keys() - used:  # only this tree's files stay: memory stays one tree's
        del cache[key]
    return found


def source_roots(items: list[ScannedFile]) -> SourceRoots:
    """The source roots ingestion detects from the scanned files and their layout files."""
    data = {item.relative_path: item.data for item in items}
    layout = {
        path: data[path].decode("utf-8", errors="replace")
        for path in layout_files_to_read(data)
        if len(data[path]) <= MAX_LAYOUT_FILE_BYTES
    }
    return detect_source_roots(list(data), layout)


def documents(
    tree: Path, cache: dict[ChunkKey, list[IndexedChunk]], settings: AstSettings
) -> list[WholeFile]:
    return [whole_file(chunks) for chunks in tree_chunks(tree, cache, settings)]


@asynccontextmanager
async def scratch_index(
    scratch: Path, chunks: list[IndexedChunk], files: list[WholeFile]
) -> AsyncIterator[TantivyBM25Index]:
    """The retrieval service's tantivy index of ``chunks`` and ``files`` in ``scratch``, as
    the one project of the replay."""
    index = TantivyBM25Index(scratch / "bm25")
    await index.open()
    try:
        await index.write(PROJECT, [], chunks, files)
        yield index
    finally:
        await index.close()


async def whole_file_lists(
    files: list[WholeFile], queries: dict[str, str], ids: dict[str, str], scratch: Path
) -> dict[str, list[FileMatch]]:
    """Each query's whole-file list over one index of ``files``."""
    async with scratch_index(scratch, [], files) as index:
        found = {
            name: await index.search_whole_files(query, ChunkFilter(PROJECT), WHOLE_FILES)
            for name, query in queries.items()
        }
    return {
        name: [
            FileMatch(
                file_id=file_id_of(ids, h.path),
                relative_path=h.path,
                language=h.language,
                rank=h.rank,
                score=h.score,
                best_score=h.best_score,
                chunks=h.chunks,
            )
            for h in hits
        ]
        for name, hits in found.items()
    }


def missing_lists(candidates: dict[str, Any], force: bool) -> dict[str, str]:
    """The queries a dump still lacks the list of: "" = the question's own whole-file list,
    else a part of the question (``question_parts``), as the gateway searches them."""
    question = candidates["question"]
    queries = {}
    if force or "whole_file_hits" not in candidates:
        queries[""] = question
    if force or "whole_file_parts" not in candidates:
        queries.update(question_parts(question))
    return queries


def replayed_dumps(
    args: argparse.Namespace, wanted: Callable[[dict[str, Any]], bool]
) -> Iterator[tuple[Path, dict[str, Any], Path, dict[ChunkKey, list[IndexedChunk]]]]:
    """(dump path, dump, the instance's tree checked out, the repository's chunk cache) of each
    dump of ``args.split`` whose candidates ``wanted`` picks, a repository at a time and its
    instances oldest first (so the cache only parses what changed between them). Prints one
    progress line after each."""
    rows = split_rows(args.split)
    by_repo: dict[str, list[tuple[Path, dict[str, Any]]]] = defaultdict(list)
    for path in sorted(args.candidates.glob("*.json.gz")):
        record = read_dump(path)
        if wanted(record["candidates"]) and record["instance_id"] in rows:
            by_repo[record["repo"]].append((path, record))
    sys.path.insert(0, str(ROOT.parent / "shared" / "bench"))
    from locbench import RepoCache  # type: ignore[import-not-found]

    trees = RepoCache(str(ROOT / ".locbench" / "repos"), str(args.mirror_root))
    done = 0
    started = time.perf_counter()
    for repo, dumps in sorted(by_repo.items()):
        cache: dict[ChunkKey, list[IndexedChunk]] = {}
        dumps.sort(key=lambda item: rows[item[1]["instance_id"]].get("created_at", ""))
        for path, record in dumps:
            yield path, record, Path(trees.checkout(repo, record["base_commit"])), cache
            done += 1
            print(
                f"{done:4d} {record['instance_id']}: {time.perf_counter() - started:.0f} s",
                flush=True,
            )


async def main() -> None:
    args = arguments(__doc__).parse_args()
    settings = AstSettings()
    for path, record, tree, cache in replayed_dumps(
        args, lambda candidates: bool(missing_lists(candidates, args.force))
    ):
        files = documents(tree, cache, settings)
        candidates = record["candidates"]
        queries = missing_lists(candidates, args.force)
        with tempfile.TemporaryDirectory(prefix="locus-whole-files-") as scratch:
            lists = await whole_file_lists(files, queries, dump_file_ids(candidates), Path(scratch))
        listed = {
            name: [[getattr(h, field) for field in candidates["file_fields"]] for h in hits]
            for name, hits in lists.items()
        }
        if "" in listed:
            candidates["whole_file_hits"] = listed.pop("")
        if args.force or "whole_file_parts" not in candidates:  # the parts were searched
            candidates["whole_file_parts"] = listed
        write_dump(path, record)


if __name__ == "__main__":
    asyncio.run(main())
