"""What `locus source add` was given: a git URL rather than a local directory, and a polling
interval written as a duration (``90``, ``30s``, ``5m``, ``1h``)."""

from __future__ import annotations

import re

# user@host:path, git's scp-like ssh form (a colon before any slash, not a Windows drive).
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/\\]")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def is_git_url(text: str) -> bool:
    """Whether ``text`` names a git repository by URL (https://, ssh://, git://, file:// or
    user@host:path) rather than a local directory."""
    return "://" in text or bool(_SCP_LIKE.match(text))


def duration_seconds(text: str) -> int:
    """Seconds in ``text``: a number of seconds, or one with a unit s, m, h or d."""
    match = _DURATION.match(text.lower())
    if match is None:
        raise ValueError(f"{text!r} is not a duration; write e.g. 90, 30s, 5m or 1h")
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
