"""Plain data of the answer service: the retrieved snippets a question comes with, what a
generator is given and streams back, and the events of an answer stream.

Lines are 1-based and inclusive. Nothing here knows about protobuf, gRPC or HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FinalStatus = Literal["finished", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class SnippetLocation:
    project_id: str
    snapshot_id: str
    file_id: str
    relative_path: str
    start_line: int
    end_line: int
    language: str = ""
    node_id: str = ""


@dataclass(frozen=True, slots=True)
class Snippet:
    """A retrieved chunk of code with the citation id the answer may cite it by."""

    citation_id: str
    chunk_id: str
    text: str
    location: SnippetLocation
    symbol_qualified_name: str = ""
    symbol_kind: str = ""  # module | class | function | method | ""
    score: float = 0.0
    why: str = ""


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    request_id: str
    question: str
    snippets: tuple[Snippet, ...]
    max_tokens: int = 0  # 0 = the service's default
    min_relevance: float = 0.0


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: Literal["system", "user"]
    content: str


@dataclass(frozen=True, slots=True)
class GenerationInput:
    """What a generator gets: the question, the snippets that fit the prompt (in citation
    order), the prompt built from them, and how long the answer may be."""

    request_id: str
    question: str
    snippets: tuple[Snippet, ...]
    messages: tuple[PromptMessage, ...]
    max_tokens: int
    prompt_tokens: int  # estimated


# What a generator streams: text, then exactly one Completion when it ends normally.


@dataclass(frozen=True, slots=True)
class TextChunk:
    text: str


@dataclass(frozen=True, slots=True)
class Completion:
    finish_reason: str  # "stop", "length", "abort", ...
    prompt_tokens: int | None = None  # as counted by the model server, when it says
    completion_tokens: int | None = None


GeneratorEvent = TextChunk | Completion


# What an answer stream carries, in this order: AnswerText*, CitedSnippet*, UsageReport,
# AnswerProblem?, AnswerFinal (always exactly one, always last).


@dataclass(frozen=True, slots=True)
class AnswerText:
    text: str


@dataclass(frozen=True, slots=True)
class CitedSnippet:
    snippet: Snippet


@dataclass(frozen=True, slots=True)
class UsageReport:
    prompt_tokens: int
    completion_tokens: int
    generator: str
    model: str


@dataclass(frozen=True, slots=True)
class AnswerProblem:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class AnswerFinal:
    status: FinalStatus
    grounded: bool
    message: str = ""


AnswerEvent = AnswerText | CitedSnippet | UsageReport | AnswerProblem | AnswerFinal
