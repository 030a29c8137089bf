"""Pure domain of the answer service: request checks, prompt building within a token budget,
citation checking, the extractive answer and the answer stream itself. No grpc, protobuf or
HTTP here."""

from locus.answer.domain.answering import AnswerPolicy, answer_question, describe_found
from locus.answer.domain.citations import CitationCheck, check_citations, cited_ids
from locus.answer.domain.errors import (
    AnswerError,
    GeneratorError,
    InsufficientContext,
    InvalidAnswerRequest,
)
from locus.answer.domain.extractive_answer import compose_extractive_answer, gather_evidence
from locus.answer.domain.model import (
    AnswerEvent,
    AnswerFinal,
    AnswerProblem,
    AnswerRequest,
    AnswerText,
    CitedSnippet,
    Completion,
    GenerationInput,
    GeneratorEvent,
    PromptMessage,
    Snippet,
    SnippetLocation,
    TextChunk,
    UsageReport,
)
from locus.answer.domain.ports import Generator
from locus.answer.domain.prompting import PromptBudget, build_prompt, render_snippet
from locus.answer.domain.text_terms import estimate_tokens, question_terms
from locus.answer.domain.validation import RequestLimits, validate_request

__all__ = [
    "AnswerError",
    "AnswerEvent",
    "AnswerFinal",
    "AnswerPolicy",
    "AnswerProblem",
    "AnswerRequest",
    "AnswerText",
    "CitationCheck",
    "CitedSnippet",
    "Completion",
    "GenerationInput",
    "Generator",
    "GeneratorError",
    "GeneratorEvent",
    "InsufficientContext",
    "InvalidAnswerRequest",
    "PromptBudget",
    "PromptMessage",
    "RequestLimits",
    "Snippet",
    "SnippetLocation",
    "TextChunk",
    "UsageReport",
    "answer_question",
    "build_prompt",
    "check_citations",
    "cited_ids",
    "compose_extractive_answer",
    "describe_found",
    "estimate_tokens",
    "gather_evidence",
    "question_terms",
    "render_snippet",
    "validate_request",
]
