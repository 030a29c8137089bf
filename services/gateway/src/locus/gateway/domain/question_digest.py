"""What matters in a long question: users paste whole logs (tens of thousands of characters of
timestamps, progress lines and repeated warnings around one traceback). A question longer than
the budget is reduced, line by line and in its own order, to its opening (the title and the
prose that says what went wrong), its stack-trace frames and error lines, then its other prose;
repeated lines (equal up to numbers) are kept once. The digest is what the cues, the lexical and
vector queries and the answer see; a question within the budget is used as written."""

from __future__ import annotations

import re

from locus.gateway.domain.stack_frames import is_frame_line

DIGEST_CHARS = 12_000  # below every downstream limit (retrieval and answer take 16,000)
HEAD_CHARS = 2_000  # the opening is kept whole: the title and the reporter's own words
MAX_LINE_CHARS = 400  # a longer line (a minified payload, a base64 blob) is cut

# Error lines in any language: exception classes and messages (Java's `Caused by:`, Go's
# `panic:`, Rust's `panicked at`, PHP's `Uncaught`, sanitizers' `==1==ERROR`, signals).
_ERROR = re.compile(
    r"\b\w*(?:Error|Exception|Warning|Panic|Failure|Fault)\b|\b(?:error|panic|panicked|fatal"
    r"|failed|failure|traceback|assert(?:ion)?|segmentation fault|abort(?:ed)?|caused by"
    r"|uncaught|thrown|SIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL|TERM))\b|^E\s{2,}",
    re.I,
)
_PROSE_WORD = re.compile(r"\b[A-Za-z][a-z]{2,}\b")
# Chinese, Japanese and Korean prose has no spaces to count words by: its characters count.
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_NUMBER = re.compile(r"0x[0-9a-f]+|\d+", re.I)


def digest_question(question: str, budget: int = DIGEST_CHARS) -> str:
    """``question`` itself when it fits ``budget``; else its most telling lines, in order."""
    if len(question) <= budget:
        return question
    lines = [line[:MAX_LINE_CHARS] for line in question.splitlines()]
    tiers: list[tuple[int, int]] = []  # (tier, line index): lower tiers are kept first
    seen: set[str] = set()
    head = 0
    for index, line in enumerate(lines):
        text = line.strip()
        if not text:
            continue
        is_frame = is_frame_line(text)
        key = _NUMBER.sub("0", text) if not is_frame else text
        if key in seen:
            continue
        seen.add(key)
        if head < HEAD_CHARS:
            head += len(line) + 1
            tiers.append((0, index))
        elif is_frame or _ERROR.search(text):
            tiers.append((1, index))
        elif _is_prose(text):
            tiers.append((2, index))
        else:
            tiers.append((3, index))
    kept: set[int] = set()
    used = 0
    for _, index in sorted(tiers):
        size = len(lines[index]) + 1
        if used + size > budget:
            continue
        kept.add(index)
        used += size
    return "\n".join(lines[i] for i in sorted(kept))


def _is_prose(text: str) -> bool:
    """A line a person wrote: mostly words (or CJK characters), few digits and symbols."""
    words = _PROSE_WORD.findall(text)
    cjk = len(_CJK_CHAR.findall(text))
    letters = sum(len(w) for w in words) + cjk
    return (len(words) >= 4 or cjk >= 6) and letters >= 0.6 * len(text)
