"""What the scripts that complete older candidate dumps share: their command line, the split's
rows by instance id, reading and writing a dump (gzip JSON, reproducible bytes), and the files
of a commit."""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def arguments(doc: str) -> argparse.ArgumentParser:
    """--candidates DIR --split FILE --mirror-root DIR [--force]; add more before parsing."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--candidates", type=Path, required=True)
    parser.add_argument("--split", type=Path, required=True)
    parser.add_argument("--mirror-root", type=Path, required=True)
    parser.add_argument("--force", action="store_true", help="redo dumps that already have it")
    return parser


def split_rows(split: Path) -> dict[str, dict[str, Any]]:
    """The split's instances by id."""
    rows = (json.loads(line) for line in split.read_text().splitlines() if line.strip())
    return {row["instance_id"]: row for row in rows if row.get("instance_id")}


def read_dump(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return record


def split_dumps(
    candidates: Path, rows: dict[str, dict[str, Any]]
) -> Iterator[tuple[int, Path, dict[str, Any], dict[str, Any]]]:
    """(count, path, dump, split row) of each dump in ``candidates`` whose instance ``rows``
    holds, in file order; ``count`` counts every dump read so far, skipped ones included."""
    for count, path in enumerate(sorted(candidates.glob("*.json.gz")), start=1):
        record = read_dump(path)
        row = rows.get(record["instance_id"])
        if row is not None:
            yield count, path, record, row


def write_dump(path: Path, record: dict[str, Any]) -> None:
    path.write_bytes(gzip.compress(json.dumps(record, separators=(",", ":")).encode(), mtime=0))


def mirror_of(mirror_root: Path, repo: str) -> Path:
    """The bare mirror of ``owner/name`` (the layout ``fetch`` makes)."""
    return mirror_root / repo.replace("/", "+") / "repo"


def blobs(mirror: Path, commit: str, paths: list[str]) -> dict[str, bytes]:
    """The contents of ``paths`` at ``commit`` (one ``git cat-file --batch``)."""
    if not paths:
        return {}
    done = subprocess.run(
        ["git", "--git-dir", str(mirror), "cat-file", "--batch"],
        input="".join(f"{commit}:{p}\n" for p in paths).encode(),
        capture_output=True,
        check=True,
    )
    out, data, position = {}, done.stdout, 0
    for path in paths:
        end = data.index(b"\n", position)
        header = data[position:end].split()
        position = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        out[path] = data[position : position + size]
        position += size + 1
    return out
