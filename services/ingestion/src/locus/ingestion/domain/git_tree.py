"""Walks the tree of one git commit, without a work tree, into the files to index or skip.

The listing is ``git ls-tree -r -z --long``'s (mode, type, object id, size, path); blobs are read
through a callback in batches. Every file of a commit is tracked, so ``.gitignore`` hides none
of them (as for a local work tree); ``.locusignore`` files and the built-in excludes still do.
Files are classified as a local walk classifies them. A ``TreeReadCache`` remembers what each
path's blob gave, so a rescan reads only blobs that changed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from locus.ingestion.domain.file_classification import classify_path, classify_size
from locus.ingestion.domain.ignore_rules import IgnoreRules
from locus.ingestion.domain.model import ScannedFile, SkippedFile, SkipReason
from locus.ingestion.domain.scanner import classify_read_file

LOCUS_IGNORE = ".locusignore"
MAX_IGNORE_FILE_BYTES = 1_048_576
READ_BATCH = 64  # blobs asked for at once (each at most max_file_bytes)

BlobReader = Callable[[Sequence[str]], Mapping[str, bytes]]  # object ids → contents


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry of a recursive tree listing (``size`` is -1 where git gives none)."""

    mode: str
    kind: str  # blob, commit (a submodule) or tree
    object_id: str
    size: int
    path: bytes

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"


def parse_tree_listing(output: bytes) -> list[TreeEntry]:
    """Entries of ``git ls-tree -r -z --long`` output: ``<mode> <type> <id> <size>\\t<path>\\0``."""
    entries = []
    for record in output.split(b"\0"):
        if not record:
            continue
        header, _, path = record.partition(b"\t")
        fields = header.decode("ascii").split()
        if len(fields) != 4 or not path:
            raise ValueError(f"unexpected ls-tree record {record[:200]!r}")
        mode, kind, object_id, size = fields
        entries.append(TreeEntry(mode, kind, object_id, int(size) if size != "-" else -1, path))
    return entries


class TreeReadCache:
    """Per path: the blob id it had when last read and what that read gave (data dropped)."""

    def __init__(self, *, has_content: Callable[[str], bool] = lambda _: True) -> None:
        self._entries: dict[str, tuple[str, ScannedFile | SkippedFile]] = {}
        self._has_content = has_content

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, path: str, object_id: str) -> ScannedFile | SkippedFile | None:
        entry = self._entries.get(path)
        if entry is None or entry[0] != object_id:
            return None
        known = entry[1]
        if isinstance(known, ScannedFile) and not self._has_content(known.sha256):
            return None
        return known

    def remember(self, path: str, object_id: str, found: ScannedFile | SkippedFile) -> None:
        if isinstance(found, ScannedFile):
            found = replace(found, data=b"", content_read=False)
        self._entries[path] = (object_id, found)

    def retain(self, paths: Sequence[str]) -> None:
        for path in self._entries.keys() - set(paths):
            del self._entries[path]


def walk_tree(
    entries: Sequence[TreeEntry],
    read_blobs: BlobReader,
    *,
    max_file_bytes: int,
    cache: TreeReadCache | None = None,
) -> Iterator[ScannedFile | SkippedFile]:
    """Yield every file of the tree that is not ignored, indexed or skipped with a reason, in
    path order. Symlinks to a file of the tree are read at the target's content; symlinks
    leaving the tree are skipped; submodules are skipped (add their repository on its own)."""
    by_path: dict[str, TreeEntry] = {}
    for entry in sorted(entries, key=lambda e: e.path):
        try:
            by_path[entry.path.decode("utf-8")] = entry
        except UnicodeDecodeError:
            yield SkippedFile(
                entry.path.decode("utf-8", "backslashreplace"),
                SkipReason.UNDECODABLE,
                "the file name is not valid UTF-8",
            )
    rules = _TreeRules(by_path, read_blobs)
    planned: list[tuple[str, TreeEntry]] = []
    for path, entry in by_path.items():
        if rules.is_excluded(path):
            continue
        if entry.kind == "commit":
            yield SkippedFile(
                path,
                SkipReason.UNREADABLE,
                f"a git submodule (commit {entry.object_id[:12]}); add its repository as a "
                "source of its own",
            )
            continue
        if entry.kind != "blob":
            continue
        planned.append((path, entry))

    # Symlink targets are blobs too: read them first, then map each link to its target entry.
    links = [entry.object_id for _, entry in planned if entry.is_symlink]
    targets = _read_all(read_blobs, links)
    resolved: list[tuple[str, TreeEntry]] = []
    for path, entry in planned:
        if not entry.is_symlink:
            resolved.append((path, entry))
            continue
        target = _link_target(path, targets.get(entry.object_id, b""))
        if target is None:
            yield SkippedFile(
                path,
                SkipReason.SYMLINK_ESCAPES,
                "the symlink points outside the repository's tree; not followed",
            )
            continue
        target_entry = by_path.get(target)
        if target_entry is not None and target_entry.kind == "blob" and not target_entry.is_symlink:
            resolved.append((path, target_entry))
        # a link to a directory or to nothing: its files are listed at their own paths

    for start in range(0, len(resolved), READ_BATCH):
        window = resolved[start : start + READ_BATCH]
        decided: dict[str, ScannedFile | SkippedFile] = {}
        to_read: list[tuple[str, TreeEntry]] = []
        for path, entry in window:
            found = _decided_without_reading(path, entry, max_file_bytes, cache)
            if found is None:
                to_read.append((path, entry))
            else:
                decided[path] = found
        contents = _read_all(read_blobs, [entry.object_id for _, entry in to_read])
        for path, entry in to_read:
            data = contents.get(entry.object_id)
            if data is None:
                decided[path] = SkippedFile(
                    path, SkipReason.UNREADABLE, f"git could not read blob {entry.object_id}"
                )
                continue
            found = classify_read_file(path, data, max_file_bytes)
            if cache is not None:
                cache.remember(path, entry.object_id, found)
            decided[path] = found
        for path, _ in window:
            yield decided[path]


def _decided_without_reading(
    path: str, entry: TreeEntry, max_file_bytes: int, cache: TreeReadCache | None
) -> ScannedFile | SkippedFile | None:
    decision = classify_path(path)
    if decision is None and entry.size >= 0:
        decision = classify_size(entry.size, max_file_bytes)
    if decision is not None:
        return SkippedFile(path, decision.reason, decision.detail)
    if cache is not None:
        known = cache.lookup(path, entry.object_id)
        if known is not None:
            return known
    return None


def _read_all(read_blobs: BlobReader, object_ids: Sequence[str]) -> dict[str, bytes]:
    wanted = list(dict.fromkeys(object_ids))
    found: dict[str, bytes] = {}
    for start in range(0, len(wanted), READ_BATCH):
        found.update(read_blobs(wanted[start : start + READ_BATCH]))
    return found


def _link_target(path: str, target: bytes) -> str | None:
    """The tree path a symlink at ``path`` points to, or None when it leaves the tree."""
    try:
        text = target.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or text.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), text))
    if joined == ".." or joined.startswith("../") or joined == ".":
        return None
    return joined


class _TreeRules:
    """Ignore decisions over a tree: built-in excludes and each directory's ``.locusignore``."""

    def __init__(self, by_path: Mapping[str, TreeEntry], read_blobs: BlobReader) -> None:
        ignore_files = {
            posixpath.dirname(path): entry
            for path, entry in by_path.items()
            if posixpath.basename(path) == LOCUS_IGNORE
            and entry.kind == "blob"
            and not entry.is_symlink
            and 0 <= entry.size <= MAX_IGNORE_FILE_BYTES
        }
        texts = _read_all(read_blobs, [entry.object_id for entry in ignore_files.values()])
        self._lines = {
            directory: texts.get(entry.object_id, b"").decode("utf-8", "replace").splitlines()
            for directory, entry in ignore_files.items()
        }
        self._rules: dict[str, IgnoreRules] = {}
        self._excluded_directories: dict[str, bool] = {"": False}

    def is_excluded(self, path: str) -> bool:
        directory = posixpath.dirname(path)
        if self._directory_excluded(directory):
            return True
        return self._rules_at(directory).is_excluded_entry(path, is_dir=False, tracked=True)

    def _directory_excluded(self, directory: str) -> bool:
        known = self._excluded_directories.get(directory)
        if known is not None:
            return known
        parent = posixpath.dirname(directory)
        excluded = self._directory_excluded(parent) or self._rules_at(parent).is_excluded_entry(
            directory, is_dir=True, tracked=True
        )
        self._excluded_directories[directory] = excluded
        return excluded

    def _rules_at(self, directory: str) -> IgnoreRules:
        known = self._rules.get(directory)
        if known is not None:
            return known
        if directory:
            rules = self._rules_at(posixpath.dirname(directory))
        else:
            rules = IgnoreRules.defaults()
        lines = self._lines.get(directory)
        if lines:
            origin = f"{directory}/{LOCUS_IGNORE}" if directory else LOCUS_IGNORE
            rules = rules.with_patterns(directory, origin, lines)
        self._rules[directory] = rules
        return rules
