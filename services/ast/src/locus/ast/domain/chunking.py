"""Splits chunk drafts that exceed the `ChunkingPolicy` into overlapping parts and numbers them.

A part starts at a statement boundary whenever it can; only a single statement that is larger
than the limits on its own is cut, and then only between lines, never inside one.
"""

import bisect
import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from locus.ast.domain.model import Chunk, ChunkingPolicy, ChunkKind


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """Lines destined for one or more chunks of the same kind and symbol.

    `line_numbers[i]` is the source line `lines[i]` comes from; `breaks` are indexes into
    `lines` where a part may start (statement boundaries).
    """

    kind: ChunkKind
    symbol_qualified_name: str | None
    lines: tuple[str, ...]
    line_numbers: tuple[int, ...]
    breaks: frozenset[int]
    start_line: int
    end_line: int


def plan_parts(
    line_lengths: Sequence[int], breaks: Collection[int], policy: ChunkingPolicy
) -> list[tuple[int, int]]:
    """Half-open `[start, end)` line ranges covering every line; consecutive parts share up to
    `policy.overlap_lines` lines, and each part fits the limits unless one line alone does not."""
    count = len(line_lengths)
    offsets = [0]
    for length in line_lengths:
        offsets.append(offsets[-1] + length + 1)
    boundaries = sorted({index for index in breaks if 0 < index < count} | {count})
    statement_starts = {0, *boundaries}

    def furthest_end(first: int) -> int:
        """The largest `end` for which lines `[first, end)` fit the limits."""
        by_chars = bisect.bisect_right(offsets, offsets[first] + policy.max_chars + 1) - 1
        return min(first + policy.max_lines, by_chars, count)

    def fits(first: int, end: int) -> bool:
        return end <= furthest_end(first)

    def furthest_boundary(first: int, after: int) -> int | None:
        index = bisect.bisect_right(boundaries, furthest_end(first)) - 1
        return boundaries[index] if index >= 0 and boundaries[index] > after else None

    def next_boundary(after: int) -> int:
        return boundaries[bisect.bisect_right(boundaries, after)]

    parts: list[tuple[int, int]] = []
    start = 0
    while start < count:
        first = max(start - policy.overlap_lines, parts[-1][0] + 1) if parts else start
        end = furthest_boundary(first, start)
        if end is None and start in statement_starts:
            # Dropping the overlap beats cutting a statement that would otherwise fit.
            first = start
            end = furthest_boundary(first, start)
        if end is None or (end < count and not fits(end, next_boundary(end))):
            # The next statement is too large for any part: fill this one line by line.
            if not fits(first, start + 1):
                first = start
            end = max(start + 1, furthest_end(first))
        parts.append((first, end))
        start = end
    return parts


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def number_chunks(drafts: Sequence[ChunkDraft], policy: ChunkingPolicy) -> tuple[Chunk, ...]:
    """Splits every draft and numbers the parts: drafts by start line (enclosing first), parts
    in order."""
    ordered = sorted(
        enumerate(drafts), key=lambda item: (item[1].start_line, -item[1].end_line, item[0])
    )
    chunks: list[Chunk] = []
    for _, draft in ordered:
        if not draft.lines:
            continue
        parts = plan_parts([len(line) for line in draft.lines], draft.breaks, policy)
        last = len(draft.lines)
        for first, end in parts:
            text = "\n".join(draft.lines[first:end])
            chunks.append(
                Chunk(
                    ordinal=len(chunks),
                    kind=draft.kind,
                    symbol_qualified_name=draft.symbol_qualified_name,
                    start_line=draft.line_numbers[first] if first > 0 else draft.start_line,
                    end_line=draft.line_numbers[end - 1] if end < last else draft.end_line,
                    text=text,
                    content_sha256=_sha256(text),
                )
            )
    return tuple(chunks)
