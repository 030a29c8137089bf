"""Reading a scanned file through the gateway: which paths a caller may name, which line range
one call may return (at most MAX_READ_LINES lines and MAX_READ_BYTES of text), and the text
split into numbered lines. Lines are 1-based and inclusive."""

from __future__ import annotations

from dataclasses import dataclass

from locus.gateway.domain.errors import InvalidRequest, LinesOutOfRange

MAX_READ_LINES = 2000
MAX_READ_BYTES = 256 * 1024
MAX_PATH_CHARS = 4096


@dataclass(frozen=True)
class NumberedLine:
    number: int
    text: str  # without its line break


@dataclass(frozen=True)
class LineWindow:
    """The lines asked for: ``start`` ≥ 1; ``end`` 0 = up to the file's end (within the cap)."""

    start: int
    end: int

    def clamped(self, total_lines: int) -> tuple[int, int]:
        """The lines one call returns of a file of ``total_lines``; LinesOutOfRange when the
        window starts past the end."""
        if total_lines == 0 and self.start == 1:
            return 1, 0  # an empty file: nothing to return, nothing out of range
        if self.start > total_lines:
            raise LinesOutOfRange(
                f"start_line {self.start} is past the end of the file ({total_lines} lines)"
            )
        last = min(self.end or self.start + MAX_READ_LINES - 1, total_lines)
        return self.start, last


@dataclass(frozen=True)
class FileExcerpt:
    project_id: str
    snapshot_id: str
    file_id: str
    relative_path: str
    language: str
    sha256: str
    start_line: int
    end_line: int
    total_lines: int
    lines: list[NumberedLine]


def normalize_file_path(path: str) -> str:
    """A path relative to a source root, as scanned (POSIX separators); InvalidRequest for an
    absolute path, a '..' segment or control characters."""
    text = path.strip()
    if not text:
        raise InvalidRequest("relative_path must name a file (or give file_id)")
    if len(text) > MAX_PATH_CHARS:
        raise InvalidRequest(f"relative_path is longer than {MAX_PATH_CHARS} characters")
    if any(ord(character) < 32 for character in text):
        raise InvalidRequest("relative_path must not contain control characters")
    posix = text.replace("\\", "/")
    if posix.startswith("/") or (len(posix) > 1 and posix[1] == ":"):
        raise InvalidRequest(
            f"relative_path {path!r} is absolute; give the path relative to the source root "
            "as scanned (e.g. src/app/main.py)"
        )
    while posix.startswith("./"):
        posix = posix[2:]
    segments = posix.split("/")
    if ".." in segments:
        raise InvalidRequest(f"relative_path {path!r} must not contain '..' segments")
    return "/".join(segment for segment in segments if segment not in ("", "."))


def line_window(start_line: int, end_line: int) -> LineWindow:
    """The asked range, validated: negative or reversed is InvalidRequest, more than
    MAX_READ_LINES lines is LinesOutOfRange."""
    if start_line < 0 or end_line < 0:
        raise InvalidRequest(
            "start_line and end_line are 1-based line numbers (0: from the first / to the last)"
        )
    start = start_line or 1
    if end_line and end_line < start:
        raise InvalidRequest(f"end_line {end_line} is before start_line {start}")
    if end_line and end_line - start + 1 > MAX_READ_LINES:
        raise LinesOutOfRange(
            f"lines {start}-{end_line} are {end_line - start + 1} lines; one call returns at "
            f"most {MAX_READ_LINES}: read the file in parts"
        )
    return LineWindow(start, end_line)


def numbered_lines(text: str, first_line: int) -> list[NumberedLine]:
    """``text`` (whole lines) as lines numbered from ``first_line``, line breaks removed."""
    return [
        NumberedLine(first_line + offset, line) for offset, line in enumerate(text.splitlines())
    ]


def check_size(text: str, start: int, end: int) -> None:
    """LinesOutOfRange when the lines are more text than one call returns."""
    size = len(text.encode("utf-8"))
    if size > MAX_READ_BYTES:
        raise LinesOutOfRange(
            f"lines {start}-{end} are {size} bytes; one call returns at most {MAX_READ_BYTES} "
            "bytes: ask for fewer lines"
        )
