"""A grounded answer without a language model: which retrieved locations match the question
and why, quoting the most relevant line(s) of each, every statement cited.

A snippet matches through the question's words found in its symbol's name or in its lines
(code, docstrings, comments). Matching snippets keep the order Locate ranked them in (the
`located` event streamed with the answer), so the best match is Locate's best that mentions the
question at all. The lines quoted show the question's rarest words first: a word every snippet
has (the project's own name, "requests" in psf/requests) tells nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from locus.answer.domain.errors import InsufficientContext
from locus.answer.domain.model import Snippet
from locus.answer.domain.text_terms import identifier_words, question_terms, stem, terms

MAX_SNIPPETS_IN_ANSWER = 4
MAX_QUOTED_LINES = 2
MAX_QUOTE_CHARS = 160
_HEADER = re.compile(r"^\s*(@|(async\s+)?def\s|class\s)")
_ROLE_ORDER = {"code": 0, "prose": 1, "header": 2}
DISCLAIMER = (
    "(Assembled from the retrieved code without a language model: read the cited lines to confirm.)"
)


@dataclass(frozen=True, slots=True)
class Evidence:
    snippet: Snippet
    matched: tuple[str, ...]  # question terms (stems) found in the snippet
    in_name: tuple[str, ...]  # ... of which in the symbol's name
    quotes: tuple[tuple[int | None, str], ...]  # (line number when known, line)


def display_name(snippet: Snippet) -> str:
    name = snippet.symbol_qualified_name
    if not name:
        return snippet.location.relative_path
    # Qualified names join with `::` in Rust, C++, Ruby and PHP members, `\\` in PHP namespaces.
    parts = name.replace("::", ".").replace("\\", ".").split(".")
    is_member = snippet.symbol_kind in ("method", "constructor")
    return ".".join(parts[-2:]) if is_member else parts[-1]


def _location(snippet: Snippet) -> str:
    location = snippet.location
    return f"{location.relative_path}:{location.start_line}-{location.end_line}"


def _line_roles(lines: list[str]) -> list[str]:
    """ "header" (def/class/decorator lines, already said by naming the symbol), "prose"
    (comments and docstrings) or "code" for each line."""
    roles = []
    in_string = False
    for line in lines:
        stripped = line.strip()
        quotes = stripped.count('"""') + stripped.count("'''")
        if in_string or quotes:
            roles.append("prose")
            in_string = in_string != (quotes % 2 == 1)
        elif stripped.startswith("#"):
            roles.append("prose")
        elif _HEADER.match(line):
            roles.append("header")
        else:
            roles.append("code")
    return roles


def _quotes(
    snippet: Snippet, wanted: dict[str, float], already_said: set[str]
) -> tuple[tuple[int | None, str], ...]:
    """Up to two lines that show the question's words (``wanted``: each word's rarity): code
    before prose before the symbol's own header, rarer words first; a second line only when it
    shows a word nothing shown so far does."""
    lines = snippet.text.splitlines()
    start, end = snippet.location.start_line, snippet.location.end_line
    numbered = start > 0 and end - start + 1 == len(lines)
    roles = _line_roles(lines)
    candidates = []
    for index, line in enumerate(lines):
        hits = terms(line) & wanted.keys()
        if hits and line.strip():
            rarity = sum(wanted[t] for t in hits)
            candidates.append((_ROLE_ORDER[roles[index]], -rarity, index, line, hits))
    candidates.sort()
    chosen: list[tuple[int | None, str]] = []
    covered = set(already_said)
    for _, _, index, line, hits in candidates:
        if chosen and not hits - covered:
            continue
        text = line.strip()
        if len(text) > MAX_QUOTE_CHARS:
            text = text[: MAX_QUOTE_CHARS - 1] + "…"
        chosen.append((start + index if numbered else None, text))
        covered |= hits
        if len(chosen) == MAX_QUOTED_LINES:
            break
    return tuple(sorted(chosen, key=lambda q: q[0] or 0))


def gather_evidence(question: str, snippets: tuple[Snippet, ...]) -> list[Evidence]:
    """The snippets that mention a word of the question, in the order given (Locate's)."""
    wanted = question_terms(question)
    seen = [
        ({stem(w) for w in identifier_words(s.symbol_qualified_name)}, terms(s.text))
        for s in snippets
    ]
    # A word's rarity among the snippets: 1 / how many of them have it.
    counts = {t: sum(t in name or t in text for name, text in seen) for t in wanted}
    rarity = {t: 1.0 / count for t, count in counts.items() if count}
    found = []
    for snippet, (name_terms, text_terms) in zip(snippets, seen, strict=True):
        matched = tuple(t for t in wanted if t in name_terms or t in text_terms)
        if not matched:
            continue
        found.append(
            Evidence(
                snippet=snippet,
                matched=matched,
                in_name=tuple(t for t in matched if t in name_terms),
                quotes=_quotes(snippet, rarity, name_terms & rarity.keys()),
            )
        )
    return found


def _spoken(question: str, matched: tuple[str, ...]) -> str:
    """The question's own words for the matched stems: "retry, limit"."""
    by_stem: dict[str, str] = {}
    for word in identifier_words(question):
        by_stem.setdefault(stem(word), word)
    return ", ".join(by_stem.get(t, t) for t in matched)


def _describe(evidence: Evidence, question: str, lead: bool) -> list[str]:
    snippet = evidence.snippet
    kind = f" ({snippet.symbol_kind})" if snippet.symbol_kind else ""
    why = f" — {snippet.why}" if snippet.why else ""
    opening = "The best match is" if lead else "Related:"
    lines = [
        f"{opening} `{display_name(snippet)}`{kind} [{snippet.citation_id}] in "
        f"{_location(snippet)}{why}; it mentions {_spoken(question, evidence.matched)}.\n"
    ]
    for number, text in evidence.quotes:
        where = f"line {number}" if number is not None else "excerpt"
        lines.append(f"> {where}: `{text}` [{snippet.citation_id}]\n")
    return lines


def compose_extractive_answer(question: str, snippets: tuple[Snippet, ...]) -> list[str]:
    """The answer as a list of pieces (one line each) to stream. Raises InsufficientContext
    when no snippet contains a word of the question."""
    wanted = question_terms(question)
    if not wanted:
        raise InsufficientContext(
            "the question has no words to look for in the code; name the behaviour, "
            "identifier or file you are asking about"
        )
    evidence = gather_evidence(question, snippets)
    if not evidence:
        raise InsufficientContext(
            f"none of the retrieved snippets mentions {_spoken(question, tuple(wanted))}"
        )
    pieces: list[str] = []
    for position, item in enumerate(evidence[:MAX_SNIPPETS_IN_ANSWER]):
        pieces.extend(_describe(item, question, lead=position == 0))
    covered = {t for item in evidence for t in item.matched}
    missing = tuple(t for t in wanted if t not in covered)
    if missing:
        pieces.append(f"No retrieved snippet mentions {_spoken(question, missing)}.\n")
    pieces.append(DISCLAIMER)
    return pieces
