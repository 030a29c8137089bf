"""Which paths and line ranges ReadFile accepts, and how text becomes numbered lines."""

from __future__ import annotations

import pytest

from locus.gateway.domain.errors import InvalidRequest, LinesOutOfRange
from locus.gateway.domain.file_reading import (
    MAX_READ_BYTES,
    MAX_READ_LINES,
    NumberedLine,
    check_size,
    line_window,
    normalize_file_path,
    numbered_lines,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("asked", "path"),
    [
        ("src/app.py", "src/app.py"),
        ("./src/app.py", "src/app.py"),
        ("src//app.py", "src/app.py"),
        ("src\\app.py", "src/app.py"),
        (" src/./app.py ", "src/app.py"),
    ],
)
def test_relative_paths_are_normalized(asked: str, path: str) -> None:
    assert normalize_file_path(asked) == path


@pytest.mark.parametrize(
    ("asked", "says"),
    [
        ("../secret", "'..'"),
        ("src/../../etc/passwd", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/win.ini", "absolute"),
        ("\\\\server\\share", "absolute"),
        ("", "must name a file"),
        ("src/a\x00.py", "control characters"),
    ],
)
def test_escaping_and_absolute_paths_are_refused(asked: str, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says):
        normalize_file_path(asked)


def test_line_windows_are_bounded() -> None:
    assert line_window(0, 0).clamped(10) == (1, 10)
    assert line_window(3, 5).clamped(10) == (3, 5)
    assert line_window(8, 50).clamped(10) == (8, 10)  # an end past the file stops at its end
    assert line_window(1, 0).clamped(5000) == (1, MAX_READ_LINES)
    assert line_window(1, 0).clamped(0) == (1, 0)  # an empty file
    with pytest.raises(LinesOutOfRange, match="past the end"):
        line_window(11, 0).clamped(10)
    with pytest.raises(LinesOutOfRange, match=f"at most {MAX_READ_LINES}"):
        line_window(1, MAX_READ_LINES + 1)
    with pytest.raises(InvalidRequest, match="before"):
        line_window(5, 4)
    with pytest.raises(InvalidRequest, match="1-based"):
        line_window(-1, 0)


def test_text_becomes_numbered_lines_without_breaks() -> None:
    assert numbered_lines("a\r\nb\n\nc", 7) == [
        NumberedLine(7, "a"),
        NumberedLine(8, "b"),
        NumberedLine(9, ""),
        NumberedLine(10, "c"),
    ]
    assert numbered_lines("", 1) == []


def test_more_text_than_one_call_returns_is_refused() -> None:
    check_size("x" * MAX_READ_BYTES, 1, 1)
    with pytest.raises(LinesOutOfRange, match="ask for fewer lines"):
        check_size("é" * MAX_READ_BYTES, 1, 1)
