"""Walks a source root and yields each file to index, or to skip with a reason, in path order.

Ignored directories are pruned without descending, directory symlinks are never followed (their
targets inside the root are walked at their real paths) and a symlinked file is read only when
its target lies inside the root. Problems with single files become `SkippedFile`s, not errors.

A ``ReadCache`` lets a rescan skip reading and hashing files that did not change: a file whose
status (size, modification and change times, inode, device) is the one it had when it was
last read, and whose last change was at least ``settle_seconds`` before that read, is reported
with that read's sha256 and language (or skipped for the reason its content gave then). Any
write changes the change time (which no user can set), so an edit is always read; a file
changed just before it was read is read again next time.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from locus.ingestion.domain.errors import InvalidSourceRoot
from locus.ingestion.domain.file_classification import (
    classify_content,
    classify_path,
    classify_size,
)
from locus.ingestion.domain.ignore_rules import IgnoreRules, load_root_rules
from locus.ingestion.domain.languages import detect_language
from locus.ingestion.domain.model import ScannedFile, SkippedFile, SkipReason

LANGUAGE_SNIFF_BYTES = 1024

# O_NOFOLLOW: a file swapped for a symlink between listing and opening is refused, not followed.
# O_NONBLOCK: opening a FIFO must not hang the walk; it is then refused as not a regular file.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


_StatusKey = tuple[int, int, int, int, int]


def _status_key(status: os.stat_result) -> _StatusKey:
    return (
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
        status.st_ino,
        status.st_dev,
    )


class ReadCache:
    """What the last walks of one root read, for the next walk to reuse (see the module doc):
    a file's sha256 and language, or why its content is skipped (binary, undecodable,
    generated, minified). ``has_content(sha256)``: whether that content is still stored (else
    the file is read)."""

    def __init__(
        self,
        *,
        has_content: Callable[[str], bool] = lambda _: True,
        settle_seconds: float = 1.0,
    ) -> None:
        self._entries: dict[str, tuple[_StatusKey, ScannedFile | SkippedFile]] = {}
        self._has_content = has_content
        self._settle_ns = int(settle_seconds * 1e9)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(
        self, relative_path: str, status: os.stat_result
    ) -> ScannedFile | SkippedFile | None:
        entry = self._entries.get(relative_path)
        if entry is None or entry[0] != _status_key(status):
            return None
        known = entry[1]
        if isinstance(known, ScannedFile) and not self._has_content(known.sha256):
            return None
        return known

    def remember(
        self, found: ScannedFile | SkippedFile, status: os.stat_result, read_at_ns: int
    ) -> None:
        """``status``: the file's before it was read; ``read_at_ns``: when the read began."""
        settled = read_at_ns - self._settle_ns
        if status.st_mtime_ns < settled and status.st_ctime_ns < settled:
            if isinstance(found, ScannedFile):
                found = replace(found, data=b"", content_read=False)
            self._entries[found.relative_path] = (_status_key(status), found)
        else:
            self._entries.pop(found.relative_path, None)

    def retain(self, relative_paths: Collection[str]) -> None:
        """Forget every file a walk no longer listed (deleted, or now skipped by its path)."""
        for path in self._entries.keys() - set(relative_paths):
            del self._entries[path]


@dataclass(slots=True)
class _DirectoryFrame:
    directory: str
    rules: IgnoreRules
    entries: Iterator[os.DirEntry[str]]
    # git ignores this directory but tracks files in it: only those (and tracked
    # sub-directories) are walked, as git shows them.
    ignored_by_git: bool = False


def walk_source(
    root: Path,
    *,
    max_file_bytes: int,
    cache: ReadCache | None = None,
    tracked: Collection[str] = (),
) -> Iterator[ScannedFile | SkippedFile]:
    """Yield every non-ignored file under `root`, sorted by POSIX relative path. With a
    ``cache``, files unchanged since a read it remembers are not read again. ``tracked``: the
    paths (relative to `root`) git tracks, which `.gitignore` does not hide.

    Raises `InvalidSourceRoot` if `root` is not a listable directory; validate the root with
    `resolve_source_root` first.
    """
    real_root = Path(os.path.realpath(root))
    if not real_root.is_dir():
        raise InvalidSourceRoot(str(root), f"the source root {root} is not a directory")
    try:
        root_entries = _sorted_entries(real_root)
    except OSError as error:
        raise InvalidSourceRoot(
            str(root), f"the source root {root} cannot be listed: {_describe(error)}"
        ) from error

    root_rules = load_root_rules(real_root)
    tracked_files = frozenset(tracked)
    tracked_directories = frozenset(path[:end] for path in tracked_files for end in _slashes(path))
    stack = [_DirectoryFrame("", root_rules, iter(root_entries))]
    while stack:
        frame = stack[-1]
        entry = next(frame.entries, None)
        if entry is None:
            stack.pop()
            continue
        relative_path = f"{frame.directory}/{entry.name}" if frame.directory else entry.name

        if not _encodable(entry.name):
            # A name that is not valid UTF-8 (os.scandir keeps its bytes as surrogates) cannot
            # be stored, hashed into an id or sent in an event: skipped, shown escaped.
            is_dir = _is_directory(entry) and not entry.is_symlink()
            if not frame.rules.is_excluded_entry(relative_path, is_dir=is_dir):
                yield SkippedFile(
                    _escaped(relative_path),
                    SkipReason.UNDECODABLE,
                    f"the {'directory' if is_dir else 'file'} name is not valid UTF-8"
                    + (" (nothing under it is indexed)" if is_dir else ""),
                )
            continue
        if entry.is_symlink():
            target = _symlink_target(real_root, root_rules, frame.rules, entry, relative_path)
            if isinstance(target, SkippedFile):
                yield target
            elif target is not None:
                yield _read_file(relative_path, target, max_file_bytes, cache)
        elif _is_directory(entry):
            tracked_directory = relative_path in tracked_directories
            ignored_by_git = frame.ignored_by_git or frame.rules.is_excluded_entry(
                relative_path, is_dir=True
            )
            if ignored_by_git and (
                not tracked_directory
                or frame.rules.is_excluded_entry(relative_path, is_dir=True, tracked=True)
            ):
                continue
            try:
                entries = _sorted_entries(Path(entry.path))
            except OSError as error:
                yield SkippedFile(
                    relative_path,
                    SkipReason.UNREADABLE,
                    f"the directory cannot be listed: {_describe(error)}",
                )
                continue
            rules = frame.rules.with_directory_files(real_root, relative_path)
            stack.append(_DirectoryFrame(relative_path, rules, iter(entries), ignored_by_git))
        elif relative_path in tracked_files:
            if not frame.rules.is_excluded_entry(relative_path, is_dir=False, tracked=True):
                yield _read_file(relative_path, Path(entry.path), max_file_bytes, cache)
        elif not frame.ignored_by_git and not frame.rules.is_excluded_entry(
            relative_path, is_dir=False
        ):
            yield _read_file(relative_path, Path(entry.path), max_file_bytes, cache)


def _slashes(path: str) -> Iterator[int]:
    """The position of each "/" of ``path``: its parent directories end there."""
    position = path.find("/")
    while position != -1:
        yield position
        position = path.find("/", position + 1)


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(relative_path: str) -> str:
    """The path with each byte that is not UTF-8 written as \\xNN."""
    return relative_path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _sorted_entries(directory: Path) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as iterator:
        entries = list(iterator)
    # Keying directories as "name/" makes the output sorted by full relative path.
    return sorted(entries, key=_sort_key)


def _sort_key(entry: os.DirEntry[str]) -> str:
    return entry.name + "/" if _is_directory(entry) else entry.name


def _is_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _symlink_target(
    real_root: Path,
    root_rules: IgnoreRules,
    rules: IgnoreRules,
    entry: os.DirEntry[str],
    relative_path: str,
) -> Path | SkippedFile | None:
    """The target to read for a symlink, a skip, or None when there is nothing to report."""
    target = Path(os.path.realpath(entry.path))
    target_is_dir = target.is_dir()
    if rules.is_excluded_entry(relative_path, is_dir=target_is_dir):
        return None
    if not target.is_relative_to(real_root):
        kind = "directory" if target_is_dir else "file"
        return SkippedFile(
            relative_path,
            SkipReason.SYMLINK_ESCAPES,
            f"the symlink points to the {kind} {target}, outside the source root; not followed",
        )
    if target_is_dir:
        return None
    # Approximation: nested ignore files on the target's own path are not consulted here.
    target_relative = target.relative_to(real_root).as_posix()
    if target_relative != "." and root_rules.is_ignored(target_relative, is_dir=False):
        return None
    return target


def _read_file(
    relative_path: str, path: Path, max_file_bytes: int, cache: ReadCache | None = None
) -> ScannedFile | SkippedFile:
    decision = classify_path(relative_path)
    if decision is not None:
        return SkippedFile(relative_path, decision.reason, decision.detail)
    if cache is not None:
        try:
            status = os.stat(path, follow_symlinks=False)
        except OSError:
            pass  # reported by the read below
        else:
            if (
                stat.S_ISREG(status.st_mode)
                and classify_size(status.st_size, max_file_bytes) is None
            ):
                known = cache.lookup(relative_path, status)
                if known is not None:
                    return known
    read_at_ns = time.time_ns()
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        return SkippedFile(
            relative_path, SkipReason.UNREADABLE, f"the file cannot be opened: {_describe(error)}"
        )
    try:
        with open(descriptor, "rb") as file:
            status = os.fstat(file.fileno())
            if not stat.S_ISREG(status.st_mode):
                return SkippedFile(
                    relative_path,
                    SkipReason.UNREADABLE,
                    "not a regular file (a FIFO, socket or device)",
                )
            decision = classify_size(status.st_size, max_file_bytes)
            if decision is not None:
                return SkippedFile(relative_path, decision.reason, decision.detail)
            # One byte over the limit reveals a file that grew after fstat.
            data = file.read(max_file_bytes + 1)
    except OSError as error:
        return SkippedFile(
            relative_path, SkipReason.UNREADABLE, f"the file cannot be read: {_describe(error)}"
        )

    found = classify_read_file(relative_path, data, max_file_bytes)
    if cache is not None and len(data) == status.st_size:
        cache.remember(found, status, read_at_ns)
    return found


def classify_read_file(
    relative_path: str, data: bytes, max_file_bytes: int
) -> ScannedFile | SkippedFile:
    """A file's content, read (from disk or a git blob): hashed and its language detected, or
    skipped for its size or its content (binary, undecodable, generated, minified)."""
    decision = classify_size(len(data), max_file_bytes) or classify_content(data)
    if decision is not None:
        return SkippedFile(relative_path, decision.reason, decision.detail)
    return ScannedFile(
        relative_path=relative_path,
        sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data),
        language=detect_language(relative_path, data[:LANGUAGE_SNIFF_BYTES]),
        data=data,
    )


def _describe(error: OSError) -> str:
    return error.strerror or str(error)
