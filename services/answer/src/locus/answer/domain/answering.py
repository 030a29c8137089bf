"""``answer_question``: one answer stream, from the request to exactly one final event.

1. Fail closed when there is too little relevant context (no snippets, or all below
   ``min_relevance``): say so, list what was found, finish ungrounded.
2. Build the prompt within the token budget and stream the generator's text.
3. Check every citation in the text against the snippets the generator was shown: emit the
   valid ones; an answer citing unknown ids or nothing at all is reported ungrounded, never
   passed off as grounded.
4. Report usage, then the final status.

Order of events: text*, citations*, usage, problem?, final. On a generator failure: text*
(what arrived), usage, problem, final(failed). When the stream is closed or cancelled, the
generator's stream is closed too (which cancels an LLM request).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from locus.answer.domain.citations import check_citations
from locus.answer.domain.errors import GeneratorError, InsufficientContext
from locus.answer.domain.model import (
    AnswerEvent,
    AnswerFinal,
    AnswerProblem,
    AnswerRequest,
    AnswerText,
    CitedSnippet,
    Completion,
    Snippet,
    TextChunk,
    UsageReport,
)
from locus.answer.domain.ports import Generator
from locus.answer.domain.prompting import PromptBudget, build_prompt
from locus.answer.domain.text_terms import estimate_tokens

MAX_LISTED_SNIPPETS = 10


@dataclass(frozen=True, slots=True)
class AnswerPolicy:
    budget: PromptBudget = field(default_factory=PromptBudget)
    default_max_tokens: int = 512


def describe_found(snippets: tuple[Snippet, ...]) -> str:
    if not snippets:
        return "Nothing was retrieved for this question."
    ranked = sorted(snippets, key=lambda s: -s.score)
    lines = ["What was retrieved:"]
    for snippet in ranked[:MAX_LISTED_SNIPPETS]:
        location = snippet.location
        symbol = f" `{snippet.symbol_qualified_name}`" if snippet.symbol_qualified_name else ""
        kind = f" ({snippet.symbol_kind})" if snippet.symbol_kind else ""
        lines.append(
            f"- {location.relative_path}:{location.start_line}-{location.end_line}"
            f"{symbol}{kind}, relevance {snippet.score:.2f}"
        )
    if len(ranked) > MAX_LISTED_SNIPPETS:
        lines.append(f"- … and {len(ranked) - MAX_LISTED_SNIPPETS} more")
    return "\n".join(lines)


def _fail_closed(
    reason: str, snippets: tuple[Snippet, ...], generator: Generator, prompt_tokens: int = 0
) -> list[AnswerEvent]:
    text = (
        f"I cannot answer this from the indexed code: {reason}.\n\n"
        f"{describe_found(snippets)}\n\n"
        "Try naming the identifier, file or behaviour you mean, or scan the code it lives in."
    )
    return [
        AnswerText(text),
        UsageReport(prompt_tokens, 0, generator.name, generator.model),
        AnswerFinal("finished", grounded=False, message=f"insufficient context: {reason}"),
    ]


async def answer_question(
    request: AnswerRequest, generator: Generator, policy: AnswerPolicy
) -> AsyncIterator[AnswerEvent]:
    if not request.snippets:
        for event in _fail_closed("no code was retrieved for the question", (), generator):
            yield event
        return
    relevant = tuple(s for s in request.snippets if s.score >= request.min_relevance)
    if not relevant:
        reason = f"no retrieved snippet reaches the minimum relevance {request.min_relevance:.2f}"
        for event in _fail_closed(reason, request.snippets, generator):
            yield event
        return

    max_tokens = request.max_tokens or policy.default_max_tokens
    prompt = build_prompt(request.request_id, request.question, relevant, max_tokens, policy.budget)
    shown = prompt.input.snippets
    if not shown:
        reason = "the snippets do not fit the prompt budget; lower max_tokens"
        for event in _fail_closed(reason, request.snippets, generator):
            yield event
        return

    parts: list[str] = []
    completion: Completion | None = None
    stream = generator.stream(prompt.input)
    try:
        async for produced in stream:
            if isinstance(produced, TextChunk):
                if produced.text:
                    parts.append(produced.text)
                    yield AnswerText(produced.text)
            else:
                completion = produced
    except InsufficientContext as error:
        for answer_event in _fail_closed(
            str(error), request.snippets, generator, prompt.input.prompt_tokens
        ):
            yield answer_event
        return
    except GeneratorError as error:
        yield _usage(generator, prompt.input.prompt_tokens, None, "".join(parts))
        yield AnswerProblem(error.code, error.message)
        yield AnswerFinal("failed", grounded=False, message=error.message)
        return
    finally:
        await stream.aclose()

    text = "".join(parts)
    if completion is None:
        completion = Completion("stop")
    check = check_citations(text, shown)
    for snippet in check.valid:
        yield CitedSnippet(snippet)
    yield _usage(generator, prompt.input.prompt_tokens, completion, text)

    if completion.finish_reason == "abort":
        message = "the model server aborted the generation"
        yield AnswerProblem("LLM_ABORTED", message)
        yield AnswerFinal("cancelled", grounded=False, message=message)
        return
    notes = []
    if completion.finish_reason == "length":
        notes.append(f"the answer was cut off at max_tokens ({max_tokens})")
    if not text.strip():
        message = "the generator returned an empty answer"
        yield AnswerProblem("EMPTY_ANSWER", message)
        yield AnswerFinal("finished", grounded=False, message=message)
        return
    if check.unknown:
        message = (
            f"the answer cites {', '.join(check.unknown)}, which "
            f"{'is' if len(check.unknown) == 1 else 'are'} not among the retrieved snippets "
            f"({', '.join(s.citation_id for s in shown)}): treat it as unverified"
        )
        yield AnswerProblem("UNGROUNDED_CITATIONS", message)
        yield AnswerFinal("finished", grounded=False, message="; ".join([message, *notes]))
        return
    if not check.valid:
        message = "the answer cites none of the retrieved snippets: treat it as unverified"
        yield AnswerProblem("NO_CITATIONS", message)
        yield AnswerFinal("finished", grounded=False, message="; ".join([message, *notes]))
        return
    yield AnswerFinal("finished", grounded=True, message="; ".join(notes))


def _usage(
    generator: Generator, prompt_estimate: int, completion: Completion | None, text: str
) -> UsageReport:
    prompt_tokens = completion.prompt_tokens if completion else None
    completion_tokens = completion.completion_tokens if completion else None
    return UsageReport(
        prompt_tokens=prompt_tokens if prompt_tokens is not None else prompt_estimate,
        completion_tokens=(
            completion_tokens if completion_tokens is not None else estimate_tokens(text)
        ),
        generator=generator.name,
        model=generator.model,
    )
