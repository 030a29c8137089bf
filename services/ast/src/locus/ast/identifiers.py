"""Deterministic identifiers of stored symbols and chunks: the same file content always gets the
same ids, so a redelivered event, a retry or a second replica writes exactly the same rows."""

from __future__ import annotations

import hashlib


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]


def node_id_for(file_id: str, qualified_name: str, kind: str) -> str:
    """hash(file_id, qualified_name, kind)."""
    return "n_" + _digest(file_id, qualified_name, kind)


def chunk_id_for(file_id: str, ordinal: int, content_sha256: str) -> str:
    """hash(file_id, ordinal, content_sha256)."""
    return "c_" + _digest(file_id, str(ordinal), content_sha256)
