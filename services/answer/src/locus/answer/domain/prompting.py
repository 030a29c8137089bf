"""The prompt: an instruction to answer only from the snippets and cite them, the snippets
numbered and line-numbered, and the question, within a token budget.

Snippets are chosen by score: the best ones first, each truncated to at most half the budget
(so one huge chunk cannot crowd out the rest), the last one that fits partly truncated to the
remaining room; what still does not fit (the lowest-scored) is dropped. The chosen snippets are
shown in citation order.
"""

from __future__ import annotations

from dataclasses import dataclass

from locus.answer.domain.model import GenerationInput, PromptMessage, Snippet
from locus.answer.domain.text_terms import estimate_tokens

SYSTEM_INSTRUCTION = (
    "You answer questions about a code base. Use only the numbered code snippets you are "
    "given; do not rely on anything else you know about this code. Cite every statement with "
    "the id of the snippet it comes from in square brackets, like [C1] or [C2][C3]. Mention "
    "the file and line numbers where the answer is. If the snippets do not contain the "
    "answer, say that they do not, and do not guess. Never invent snippet ids, files, symbols "
    "or code."
)
MIN_SNIPPET_TOKENS = 48  # smaller than this, a truncated snippet is not worth showing
_TRUNCATION_NOTE = "     … ({hidden} more lines not shown)"


@dataclass(frozen=True, slots=True)
class PromptBudget:
    context_window_tokens: int = 8192
    reserve_tokens: int = 64  # chat template overhead and estimation error


@dataclass(frozen=True, slots=True)
class BuiltPrompt:
    input: GenerationInput
    dropped: tuple[str, ...]  # citation ids left out for lack of room
    truncated: tuple[str, ...]  # citation ids shown only in part


def render_snippet(snippet: Snippet, max_lines: int | None = None) -> str:
    """``[C1] path:start-end``, the symbol and why it was retrieved, then the numbered lines.
    A chunk whose text is not the plain source range (a class outline) is shown unnumbered."""
    location = snippet.location
    lines = snippet.text.splitlines() or [""]
    shown = lines if max_lines is None else lines[:max_lines]
    start, end = location.start_line, location.end_line
    contiguous = start > 0 and end - start + 1 == len(lines)
    parts = [f"[{snippet.citation_id}] {location.relative_path}:{start}-{end}"]
    if snippet.symbol_qualified_name:
        kind = f" ({snippet.symbol_kind})" if snippet.symbol_kind else ""
        parts.append(f"symbol: {snippet.symbol_qualified_name}{kind}")
    if snippet.why:
        parts.append(f"why: {snippet.why}")
    if contiguous:
        width = len(str(end))
        parts.extend(f"{start + i:>{width}} | {line}" for i, line in enumerate(shown))
    else:
        parts.append("(outline of the range above, not numbered line by line)")
        parts.extend(f"  | {line}" for line in shown)
    if len(shown) < len(lines):
        parts.append(_TRUNCATION_NOTE.format(hidden=len(lines) - len(shown)))
    return "\n".join(parts)


def _fit(snippet: Snippet, budget: int) -> tuple[str, bool] | None:
    """The snippet rendered within ``budget`` tokens (truncated if need be), or None."""
    full = render_snippet(snippet)
    if estimate_tokens(full) <= budget:
        return full, False
    line_count = len(snippet.text.splitlines())
    low, high, best = 1, max(line_count - 1, 1), None
    while low <= high:  # the most lines that fit
        middle = (low + high) // 2
        rendered = render_snippet(snippet, middle)
        if estimate_tokens(rendered) <= budget:
            best, low = rendered, middle + 1
        else:
            high = middle - 1
    return (best, True) if best is not None else None


def user_message(question: str, rendered_snippets: list[str]) -> str:
    body = "\n\n".join(rendered_snippets) if rendered_snippets else "(no snippets)"
    return (
        f"Code snippets:\n\n{body}\n\n"
        f"Question: {question.strip()}\n\n"
        "Answer from the snippets above only, citing them as [C1], [C2], ..."
    )


def build_prompt(
    request_id: str,
    question: str,
    snippets: tuple[Snippet, ...],
    max_tokens: int,
    budget: PromptBudget,
) -> BuiltPrompt:
    fixed = estimate_tokens(SYSTEM_INSTRUCTION) + estimate_tokens(user_message(question, []))
    room = budget.context_window_tokens - max_tokens - budget.reserve_tokens - fixed
    per_snippet_cap = max(room // 2, MIN_SNIPPET_TOKENS)
    by_score = sorted(snippets, key=lambda s: -s.score)  # stable: ties keep citation order
    chosen: dict[str, str] = {}
    truncated: list[str] = []
    dropped: list[str] = []
    remaining = room
    for snippet in by_score:
        allowance = min(remaining, per_snippet_cap)
        fitted = _fit(snippet, allowance) if allowance >= MIN_SNIPPET_TOKENS else None
        if fitted is None:
            dropped.append(snippet.citation_id)
            continue
        rendered, was_truncated = fitted
        chosen[snippet.citation_id] = rendered
        if was_truncated:
            truncated.append(snippet.citation_id)
        remaining -= estimate_tokens(rendered) + 1  # the blank line between snippets
    kept = tuple(s for s in snippets if s.citation_id in chosen)
    rendered_in_order = [chosen[s.citation_id] for s in kept]
    messages = (
        PromptMessage("system", SYSTEM_INSTRUCTION),
        PromptMessage("user", user_message(question, rendered_in_order)),
    )
    return BuiltPrompt(
        input=GenerationInput(
            request_id=request_id,
            question=question.strip(),
            snippets=kept,
            messages=messages,
            max_tokens=max_tokens,
            prompt_tokens=sum(estimate_tokens(m.content) for m in messages),
        ),
        dropped=tuple(dropped),
        truncated=tuple(truncated),
    )
