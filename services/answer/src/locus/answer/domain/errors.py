"""Exceptions the answer domain and its generators raise on purpose."""

from __future__ import annotations


class AnswerError(Exception):
    """Base class of every deliberate answer error."""


class InvalidAnswerRequest(AnswerError):
    """The request cannot be answered as asked (empty question, duplicate citation ids...)."""


class GeneratorError(AnswerError):
    """A generator could not produce (the rest of) an answer. ``code`` is stable and
    machine-readable (LLM_UNAVAILABLE, LLM_REJECTED, LLM_STREAM_BROKEN, ...); the message says
    what happened and where, for a person."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class InsufficientContext(AnswerError):
    """A generator found nothing in the snippets that answers the question; raised before it
    streams any text, so the answer can fail closed."""
