"""Stored file contents as GetFileContent and GetFileContents serve them: by sha256, whole or a
line range, many at once within a reply's size budget."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from locus.ingestion.adapters.blob_store import BlobNotFound, FileBlobStore, is_sha256
from locus.ingestion.domain.errors import ContentNotFound, InvalidRequest

MAX_CONTENTS_PER_CALL = 256  # GetFileContents


@dataclass(frozen=True)
class FileContent:
    sha256: str
    text: str
    start_line: int
    end_line: int
    total_lines: int


@dataclass(frozen=True)
class FileContents:
    contents: list[FileContent]
    missing: list[str]  # sha256 with no stored content
    deferred: list[str]  # not included (the reply's size limit): to ask again


class FileReading:
    """Reads of the content store; ``reply_bytes`` bounds one GetFileContents reply."""

    def __init__(self, blobs: FileBlobStore, *, reply_bytes: int) -> None:
        self._blobs = blobs
        self._reply_bytes = reply_bytes

    async def file_contents(self, sha256s: Sequence[str]) -> FileContents:
        """Whole contents of many files, in the order asked (repeats once): what is stored,
        which sha256 have no content, and which were deferred so the texts stay under the
        ``reply_bytes`` (the first file always comes, whatever its size)."""
        max_bytes = self._reply_bytes
        if len(sha256s) > MAX_CONTENTS_PER_CALL:
            raise InvalidRequest(
                f"{len(sha256s)} sha256 values; ask for at most {MAX_CONTENTS_PER_CALL} at once"
            )
        wanted = list(dict.fromkeys(_asked_sha256(value) for value in sha256s))
        return await asyncio.to_thread(self._read_contents, wanted, max_bytes)

    def _read_contents(self, wanted: list[str], max_bytes: int) -> FileContents:
        """``file_contents``' reads, in one worker thread rather than one hop per file."""
        contents: list[FileContent] = []
        missing: list[str] = []
        size = 0
        for position, value in enumerate(wanted):
            try:
                data = self._blobs.get(value)
            except BlobNotFound:
                missing.append(value)
                continue
            if contents and size + len(data) > max_bytes:
                return FileContents(contents, missing, wanted[position:])
            size += len(data)
            contents.append(_whole_file(value, data))
        return FileContents(contents, missing, [])

    async def file_content(self, sha256: str, start_line: int, end_line: int) -> FileContent:
        sha256 = _asked_sha256(sha256)
        if start_line < 0 or end_line < 0:
            raise InvalidRequest("line numbers are 1-based; 0 means 'from the start / to the end'")
        if end_line and start_line and end_line < start_line:
            raise InvalidRequest(f"end_line {end_line} is before start_line {start_line}")
        try:
            data = await asyncio.to_thread(self._blobs.get, sha256)
        except BlobNotFound:
            raise ContentNotFound(f"no stored content with sha256 {sha256}") from None
        if not start_line and not end_line:
            return _whole_file(sha256, data)
        lines = data.decode("utf-8-sig").splitlines(keepends=True)
        total = len(lines)
        first = start_line or 1
        last = min(end_line or total, total)
        if total and first > total:
            raise InvalidRequest(f"start_line {first} is past the end of the file ({total} lines)")
        return FileContent(sha256, "".join(lines[first - 1 : last]), first, last, total)


def _asked_sha256(value: str) -> str:
    sha256 = value.strip().lower()
    if not is_sha256(sha256):
        raise InvalidRequest(f"sha256 must be 64 hexadecimal characters, not {value!r}")
    return sha256


def _whole_file(sha256: str, data: bytes) -> FileContent:
    text = data.decode("utf-8-sig")
    total = len(text.splitlines())
    return FileContent(sha256, text, 1, total, total)
