"""Checks of an answer request before any generation starts."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from locus.answer.domain.errors import InvalidAnswerRequest
from locus.answer.domain.model import AnswerRequest

CITATION_ID = re.compile(r"^C[1-9][0-9]{0,3}$")


@dataclass(frozen=True, slots=True)
class RequestLimits:
    max_question_chars: int = 16000
    max_snippets: int = 100
    max_answer_tokens: int = 2048


def validate_request(request: AnswerRequest, limits: RequestLimits) -> None:
    question = request.question.strip()
    if not question:
        raise InvalidAnswerRequest("question is empty: ask something about the code")
    if len(request.question) > limits.max_question_chars:
        raise InvalidAnswerRequest(
            f"question is {len(request.question)} characters long; "
            f"the limit is {limits.max_question_chars}"
        )
    if len(request.snippets) > limits.max_snippets:
        raise InvalidAnswerRequest(
            f"{len(request.snippets)} context snippets given; the limit is {limits.max_snippets}"
        )
    seen: set[str] = set()
    for position, snippet in enumerate(request.snippets, start=1):
        if not CITATION_ID.match(snippet.citation_id):
            raise InvalidAnswerRequest(
                f"context snippet {position} has citation id {snippet.citation_id!r}; "
                "use C1, C2, ..."
            )
        if snippet.citation_id in seen:
            raise InvalidAnswerRequest(
                f"citation id {snippet.citation_id} is used by more than one context snippet"
            )
        seen.add(snippet.citation_id)
        if snippet.location.start_line < 0 or snippet.location.end_line < 0:
            raise InvalidAnswerRequest(f"{snippet.citation_id} has negative line numbers")
        if not math.isfinite(snippet.score):
            raise InvalidAnswerRequest(f"{snippet.citation_id} has a score that is not a number")
    if request.max_tokens < 0:
        raise InvalidAnswerRequest("max_tokens must not be negative (0 = the default)")
    if request.max_tokens > limits.max_answer_tokens:
        raise InvalidAnswerRequest(
            f"max_tokens {request.max_tokens} is above the limit {limits.max_answer_tokens}"
        )
    if not math.isfinite(request.min_relevance) or request.min_relevance < 0:
        raise InvalidAnswerRequest("min_relevance must be a number not below 0")
