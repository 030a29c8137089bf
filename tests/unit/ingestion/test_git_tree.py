"""Walking a commit's tree without a work tree: the ls-tree listing, .locusignore and built-in
excludes (never .gitignore: every file of a commit is tracked), symlinks and submodules, size
limits from the listing, and a cache that reads only blobs that changed."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import pytest

from locus.ingestion.domain.git_tree import (
    TreeEntry,
    TreeReadCache,
    parse_tree_listing,
    walk_tree,
)
from locus.ingestion.domain.model import ScannedFile, SkippedFile, SkipReason

pytestmark = pytest.mark.unit

LIMIT = 64 * 1024


class Blobs:
    """A blob store keyed by git-style ids, counting what is read."""

    def __init__(self) -> None:
        self.contents: dict[str, bytes] = {}
        self.read: list[str] = []

    def add(self, data: bytes) -> str:
        object_id = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self.contents[object_id] = data
        return object_id

    def __call__(self, object_ids: Sequence[str]) -> Mapping[str, bytes]:
        self.read.extend(object_ids)
        return {i: self.contents[i] for i in object_ids if i in self.contents}


def tree(
    blobs: Blobs, files: dict[str, bytes], links: dict[str, str] | None = None
) -> list[TreeEntry]:
    entries = [
        TreeEntry("100644", "blob", blobs.add(data), len(data), path.encode())
        for path, data in files.items()
    ]
    for path, target in (links or {}).items():
        entries.append(
            TreeEntry("120000", "blob", blobs.add(target.encode()), len(target), path.encode())
        )
    return entries


def walk(
    entries: list[TreeEntry], blobs: Blobs, cache: TreeReadCache | None = None
) -> dict[str, ScannedFile | SkippedFile]:
    return {
        item.relative_path: item
        for item in walk_tree(entries, blobs, max_file_bytes=LIMIT, cache=cache)
    }


def test_parse_ls_tree_long_output() -> None:
    output = (
        b"100644 blob 587be6b4c3f93f93c489c0111bba5596147a26cb       2\ta/x.py\0"
        b"120000 blob 5d207318" + b"9" * 32 + b"       6\tlink\0"
        b"160000 commit " + b"a" * 40 + b"       -\tvendor/lib\0"
    )
    entries = parse_tree_listing(output)
    assert [(e.mode, e.kind, e.size, e.path) for e in entries] == [
        ("100644", "blob", 2, b"a/x.py"),
        ("120000", "blob", 6, b"link"),
        ("160000", "commit", -1, b"vendor/lib"),
    ]
    assert entries[1].is_symlink
    assert not entries[0].is_symlink
    with pytest.raises(ValueError, match="unexpected ls-tree record"):
        parse_tree_listing(b"garbage\0")


def test_files_are_hashed_and_classified_as_a_local_walk_does() -> None:
    blobs = Blobs()
    source = b"def retry_limit():\n    return 3\n"
    found = walk(
        tree(blobs, {"src/app.py": source, "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00"}), blobs
    )
    app = found["src/app.py"]
    assert isinstance(app, ScannedFile)
    assert (app.sha256, app.language, app.data) == (
        hashlib.sha256(source).hexdigest(),
        "python",
        source,
    )
    assert isinstance(found["logo.png"], SkippedFile)
    assert found["logo.png"].reason == SkipReason.BINARY


def test_gitignore_hides_nothing_locusignore_and_default_excludes_do() -> None:
    blobs = Blobs()
    found = walk(
        tree(
            blobs,
            {
                ".gitignore": b"*.py\n",
                ".locusignore": b"secret/\n",
                "kept.py": b"x = 1\n",
                "secret/key.py": b"k = 1\n",
                "node_modules/lib/index.js": b"var a;\n",
                "sub/.locusignore": b"*.txt\n",
                "sub/notes.txt": b"notes\n",
                "notes.txt": b"notes\n",
            },
        ),
        blobs,
    )
    assert sorted(found) == [
        ".gitignore",
        ".locusignore",
        "kept.py",
        "notes.txt",
        "sub/.locusignore",
    ]


def test_oversize_files_are_skipped_from_the_listing_without_reading() -> None:
    blobs = Blobs()
    big = b"x" * (LIMIT + 1)
    found = walk(tree(blobs, {"big.txt": big}), blobs)
    assert found["big.txt"].reason == SkipReason.OVERSIZE  # type: ignore[union-attr]
    assert blobs.read == []


def test_symlinks_inside_the_tree_are_read_at_their_target_others_are_skipped() -> None:
    blobs = Blobs()
    entries = tree(
        blobs,
        {"a/x.py": b"x = 1\n"},
        {"link.py": "a/x.py", "out.py": "../../etc/passwd", "abs.py": "/etc/passwd", "dir": "a"},
    )
    found = walk(entries, blobs)
    link = found["link.py"]
    assert isinstance(link, ScannedFile)
    assert link.data == b"x = 1\n"
    assert found["out.py"].reason == SkipReason.SYMLINK_ESCAPES  # type: ignore[union-attr]
    assert found["abs.py"].reason == SkipReason.SYMLINK_ESCAPES  # type: ignore[union-attr]
    assert "dir" not in found


def test_submodules_and_undecodable_names_are_skipped_with_a_reason() -> None:
    blobs = Blobs()
    entries = [
        TreeEntry("160000", "commit", "a" * 40, -1, b"vendor/lib"),
        TreeEntry("100644", "blob", blobs.add(b"x\n"), 2, b"caf\xe9.py"),
    ]
    found = walk(entries, blobs)
    assert "own" in found["vendor/lib"].detail  # type: ignore[union-attr]
    assert found["caf\\xe9.py"].reason == SkipReason.UNDECODABLE  # type: ignore[union-attr]


def test_a_rescan_reads_only_blobs_that_changed() -> None:
    blobs = Blobs()
    cache = TreeReadCache()
    first = tree(blobs, {"a.py": b"a = 1\n", "b.py": b"b = 1\n"})
    walk(first, blobs, cache)
    blobs.read.clear()
    second = tree(blobs, {"a.py": b"a = 2\n", "b.py": b"b = 1\n"})
    found = walk(second, blobs, cache)
    assert blobs.read == [second[0].object_id]
    unchanged = found["b.py"]
    assert isinstance(unchanged, ScannedFile)
    assert not unchanged.content_read
    assert unchanged.sha256 == hashlib.sha256(b"b = 1\n").hexdigest()
    cache.retain(["a.py"])
    assert len(cache) == 1
