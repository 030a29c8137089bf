"""Validation of the source roots a caller may ingest and safe joins of paths beneath them.

Every check happens on the fully resolved path, so a symlink cannot smuggle a root or a file
out of the allowed area.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from locus.ingestion.domain.errors import InvalidSourceRoot, PathEscapesRoot, SourceRootNotAllowed

ALLOWED_BASES_VARIABLE = "LOCUS_INGESTION_ALLOWED_BASES"


def resolve_source_root(path: str, allowed_bases: Sequence[Path]) -> Path:
    """Return the real path of `path` if it is an existing directory inside an allowed base.

    A relative path is resolved against the current directory and `~` is expanded. The
    allowed-base check comes before the existence check so that callers cannot probe which
    paths exist outside the allowed bases.
    """
    if not path.strip():
        raise InvalidSourceRoot(path, "the source root is empty; pass the path of a directory")
    if "\x00" in path:
        raise InvalidSourceRoot(
            path, f"the source root {path!r} contains a NUL character; pass a plain directory path"
        )

    try:
        resolved = Path(os.path.realpath(Path(path).expanduser()))
    except (OSError, ValueError) as error:  # e.g. /proc/1/root: permission denied
        reason = getattr(error, "strerror", None) or error
        raise InvalidSourceRoot(
            path, f"the source root {path} cannot be resolved ({reason})"
        ) from None
    resolved_bases = [Path(os.path.realpath(base.expanduser())) for base in allowed_bases]
    shown_path = path if str(resolved) == path else f"{path} (resolves to {resolved})"

    if not resolved_bases:
        raise SourceRootNotAllowed(
            path,
            f"{shown_path} cannot be ingested because no allowed source bases are configured; "
            f"set {ALLOWED_BASES_VARIABLE} to a list of directories that may be ingested "
            "(a local stack: locus up --allow-base DIR)",
        )
    if not any(resolved.is_relative_to(base) for base in resolved_bases):
        listed = ", ".join(str(base) for base in resolved_bases)
        raise SourceRootNotAllowed(
            path,
            f"{shown_path} is outside the allowed source bases ({listed}); "
            f"set {ALLOWED_BASES_VARIABLE} to include it (a local stack: restart it with "
            "locus up --allow-base DIR)",
        )
    try:
        exists, is_directory = resolved.exists(), resolved.is_dir()
    except OSError as error:
        raise InvalidSourceRoot(
            path, f"the source root {shown_path} cannot be read ({error.strerror or error})"
        ) from None
    if not exists:
        raise InvalidSourceRoot(
            path, f"the source root {shown_path} does not exist; check the path for typos"
        )
    if not is_directory:
        raise InvalidSourceRoot(
            path, f"the source root {shown_path} is not a directory; pass the repository directory"
        )
    return resolved


def safe_join(root: Path, relative_path: str) -> Path:
    """Join `relative_path` onto `root`, refusing anything that would land outside `root`.

    `..` components and absolute paths are refused outright; the joined path is then resolved
    so that a symlink pointing outside the root is refused as well.
    """
    if "\x00" in relative_path:
        raise PathEscapesRoot(relative_path, f"{relative_path!r} contains a NUL character")
    posix_path = PurePosixPath(relative_path)
    if posix_path.is_absolute() or Path(relative_path).is_absolute():
        raise PathEscapesRoot(
            relative_path,
            f"{relative_path} is absolute; pass a path relative to the source root {root}",
        )
    if ".." in posix_path.parts:
        raise PathEscapesRoot(
            relative_path,
            f"{relative_path} contains '..'; pass a path that stays inside the source root {root}",
        )

    real_root = Path(os.path.realpath(root))
    joined = Path(os.path.realpath(real_root / posix_path))
    if not joined.is_relative_to(real_root):
        raise PathEscapesRoot(
            relative_path,
            f"{relative_path} resolves to {joined} through a symlink, "
            f"which is outside the source root {real_root}",
        )
    return joined
