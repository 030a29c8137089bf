"""Content-addressed file snapshots on disk: ``<root>/ab/cd/<sha256>``, written atomically, so
any service can read the exact text of any snapshot by hash. The key must be a sha256 hex digest
(nothing else names a path); the content is not hashed again: ``put`` trusts a digest its caller
computed (the scanner, from the same bytes)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def is_sha256(value: str) -> bool:
    return bool(_SHA256.match(value))


class BlobNotFound(KeyError):
    pass


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, sha256: str) -> Path:
        if not is_sha256(sha256):
            raise ValueError(f"not a sha256 hex digest: {sha256!r}")
        return self._root / sha256[:2] / sha256[2:4] / sha256

    def put(self, data: bytes, sha256: str = "") -> str:
        """Store ``data`` under its sha256 (``sha256``: already computed by the caller)."""
        sha256 = sha256 or hashlib.sha256(data).hexdigest()
        path = self._path(sha256)
        if path.exists():
            return sha256
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha256

    def get(self, sha256: str) -> bytes:
        path = self._path(sha256)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise BlobNotFound(sha256) from None

    def delete(self, sha256: str) -> bool:
        """Remove the snapshot (no project refers to it any more); False when it was absent."""
        try:
            self._path(sha256).unlink()
        except FileNotFoundError:
            return False
        return True

    def exists(self, sha256: str) -> bool:
        return self._path(sha256).exists()
