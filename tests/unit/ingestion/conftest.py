"""Fixtures for the ingestion unit tests: real file trees and an unprivileged view of them."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

NOBODY = 65534

WriteFile = Callable[[Path, str, bytes | str], Path]


@pytest.fixture
def write_file() -> WriteFile:
    """Write `content` to `root/relative_path`, creating parent directories."""

    def write(root: Path, relative_path: str, content: bytes | str = "") -> Path:
        path = root / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        return path

    return write


@pytest.fixture
def permission_root() -> Iterator[Path]:
    """A directory every user can traverse, so permission checks can run as `nobody`.

    pytest's tmp_path lives under a 0700 directory, which `nobody` could not enter at all.
    """
    directory = Path(tempfile.mkdtemp(prefix="locus-ingestion-permissions-"))
    directory.chmod(0o755)
    yield directory
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if not path.is_symlink():
                path.chmod(stat.S_IRWXU)
    shutil.rmtree(directory)


@pytest.fixture
def unprivileged() -> Callable[[], AbstractContextManager[None]]:
    """A context in which file permissions apply: as root, the effective user becomes nobody."""

    @contextmanager
    def drop() -> Iterator[None]:
        if os.geteuid() != 0:
            yield
            return
        os.setegid(NOBODY)
        os.seteuid(NOBODY)
        try:
            yield
        finally:
            os.seteuid(0)
            os.setegid(0)

    return drop
