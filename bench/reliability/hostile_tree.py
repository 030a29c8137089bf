"""A source tree built to hurt a scanner (issue 12), shared by the hostile-files test
(tests/e2e/test_hostile_files.py) and `make reliability` (bench/reliability/hostile.py).

``build_hostile_tree(root)`` writes the files and returns relative path → what the file is, the
path written as Locus reports it (a name that is not UTF-8 with its bytes as ``\\xNN``). Every one
of them must end indexed or listed as skipped with a reason, and the scan must complete.
``NORMAL_FILE`` is an ordinary file in the same tree that must be searchable afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

NORMAL_FILE = "normal/ledger.py"
NORMAL_SYMBOL = "reconcile_hostile_ledger_totals"
NORMAL_SOURCE = f'''"""Ledger totals, kept beside files built to break the scanner."""


def {NORMAL_SYMBOL}(entries: list[int]) -> int:
    """Sum the ledger entries so the hostile tree has one ordinary, searchable function."""
    return sum(entries)
'''
UNDECODABLE_NAME = b"name-\xff\xfe-not-utf8.py"
LONG_LINE_BYTES = 5 * 1024 * 1024
MANY_LINES = 200_000
NESTED_DEFINITIONS = 1_200  # past tree-sitter's 512 levels, within the 1 MiB file limit
NESTED_BRACKETS = 2_000


def _nested_definitions(depth: int) -> str:
    # One space per level keeps the file under 1 MiB; a blank line between levels keeps its
    # average line short enough not to look minified.
    lines = [f"{' ' * level}def level_{level}():\n\n" for level in range(depth)]
    return "".join(lines) + f"{' ' * depth}return {depth}\n"


def build_hostile_tree(root: Path) -> dict[str, str]:
    """Write the hostile files under ``root`` (created if missing); relative path → what it is."""
    root.mkdir(parents=True, exist_ok=True)
    built: dict[str, str] = {}

    def write(relative: str, data: bytes, what: str) -> Path:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        built[relative] = what
        return path

    write(NORMAL_FILE, NORMAL_SOURCE.encode(), "an ordinary Python file (must be searchable)")

    # A file name whose bytes are not UTF-8 (Linux allows any byte but / and NUL).
    with open(os.fsencode(root) + b"/" + UNDECODABLE_NAME, "wb") as file:
        file.write(b"def named_badly():\n    return 1\n")
    shown = UNDECODABLE_NAME.decode("utf-8", "backslashreplace")
    built[shown] = "a file name with invalid UTF-8 bytes (0xff 0xfe)"

    write(
        "nul_bytes.py",
        b"def before_nul():\n    return 1\n\x00\x00\x00\ndef after_nul():\n    return 2\n",
        "a Python file with NUL bytes in it",
    )
    write(
        "one_long_line.js",
        b"var x = '" + b"a" * (LONG_LINE_BYTES - 12) + b"';\n",
        "a 5 MB file that is one line",
    )
    write(
        "many_lines.py",
        b"x=1\n" * MANY_LINES,  # 800,000 bytes: under the 1 MiB limit, so it is parsed
        f"a {MANY_LINES:,}-line Python file",
    )
    write(
        "deep_definitions.py",
        _nested_definitions(NESTED_DEFINITIONS).encode(),
        f"{NESTED_DEFINITIONS:,} nested Python definitions (tree-sitter follows 512 levels)",
    )
    # One bracket a line: the same depth on one line would look minified and be skipped.
    write(
        "deep_brackets.py",
        (
            "def deep_brackets():\n    return "
            + "(\n" * NESTED_BRACKETS
            + "1"
            + "\n)" * NESTED_BRACKETS
            + "\n\n\nvalue = "
            + "[\n" * NESTED_BRACKETS
            + "\n]" * NESTED_BRACKETS
            + "\n\n\ncalled = "
            + "f(\n" * NESTED_BRACKETS
            + "\n)" * NESTED_BRACKETS
            + "\n"
        ).encode(),
        f"{NESTED_BRACKETS:,}-deep nested parentheses, brackets and calls",
    )

    # Two symlinks pointing at each other, and one pointing at itself.
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink("self_loop.py", root / "self_loop.py")
    built["loop_a.py"] = "a symlink in a loop (loop_a.py → loop_b.py → loop_a.py)"
    built["loop_b.py"] = "a symlink in a loop (loop_b.py → loop_a.py → loop_b.py)"
    built["self_loop.py"] = "a symlink to itself"

    os.mkfifo(root / "named_pipe.py")
    built["named_pipe.py"] = "a FIFO (opening it for reading would block without a writer)"

    unreadable = write(
        "unreadable.py",
        b"def locked_away():\n    return 1\n",
        "a file with mode 000 (readable anyway when the scanner runs as root)",
    )
    unreadable.chmod(0)
    return built
