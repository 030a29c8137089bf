"""Differences between two snapshots of a source root, each a map of path to sha256."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import TypeVar

from locus.ingestion.domain.model import ChangeType, FileChange

T = TypeVar("T")


def compute_changes(previous: Mapping[str, str], current: Mapping[str, str]) -> list[FileChange]:
    """Added, modified and deleted files between `previous` and `current`, sorted by path."""
    changes: list[FileChange] = []
    for path in sorted(previous.keys() | current.keys()):
        old_sha256 = previous.get(path)
        new_sha256 = current.get(path)
        if old_sha256 == new_sha256:
            continue
        if old_sha256 is None:
            change_type = ChangeType.ADDED
        elif new_sha256 is None:
            change_type = ChangeType.DELETED
        else:
            change_type = ChangeType.MODIFIED
        changes.append(FileChange(path, change_type, old_sha256, new_sha256))
    return changes


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most `size` items; the last one may be shorter."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch
