"""The credential the CLI calls the gateway with: ``LOCUS_API_KEY`` (an API key or an OIDC
token), else the file ``LOCUS_API_KEY_FILE`` names, else the admin key ``locus up`` wrote for
the running stack. Never taken from the command line, where other users could read it."""

from __future__ import annotations

import os
from pathlib import Path

from locus.cli.exit_codes import CliError, ExitCode
from locus.cli.stack_state import StackState

KEY_VARIABLE = "LOCUS_API_KEY"
KEY_FILE_VARIABLE = "LOCUS_API_KEY_FILE"


def caller_credential(stack: StackState | None, *, elsewhere: bool) -> str:
    """The credential for this call ("" when there is none: the gateway then says what to
    send). ``elsewhere``: the gateway is not the running stack's (``--gateway``), so the
    stack's admin key is not offered to it."""
    credential = os.environ.get(KEY_VARIABLE, "").strip()
    if credential:
        return credential
    key_file = os.environ.get(KEY_FILE_VARIABLE, "").strip()
    if key_file:
        return _read(Path(key_file), f"{KEY_FILE_VARIABLE}={key_file}")
    if not elsewhere and stack is not None and stack.admin_key_file:
        path = Path(stack.admin_key_file)
        if path.exists():
            return _read(path, "the stack's admin key")
    return ""


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise CliError(
            f"cannot read {what} ({path}): {error.strerror}; "
            f"set {KEY_VARIABLE} or {KEY_FILE_VARIABLE} to a key you may read",
            ExitCode.USAGE,
        ) from None
