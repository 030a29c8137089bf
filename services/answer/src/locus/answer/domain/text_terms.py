"""Words of a question and of code, normalised so they can be compared: identifiers are split
(``enforceRetryLimit``, ``enforce_retry_limit`` → enforce, retry, limit), lower-cased, lightly
stemmed (enforced and enforce → enforc, retries → retry), and question filler words are
dropped. Also a rough token count for prompt budgets."""

from __future__ import annotations

import math
import re

# a run of letters/digits; camelCase and snake_case are split below
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_FILLER_WORDS = """
a an and are as at be been being but by can could do does did done for from get gets had has
have how i if in into is it its me my not of on or our should so some than that the their them
then there these they this those to up us use used uses using via was we were what when where
which who whom whose why will with would you your code file files function functions method
methods class classes module modules implemented implement implements happen happens work works
find show tell explain defined define
"""
STOPWORDS = frozenset(_FILLER_WORDS.split())

CHARS_PER_TOKEN = 3.5  # code and identifiers tokenize densely; err towards overestimating


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def stem(word: str) -> str:
    word = word.lower()
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def identifier_words(text: str) -> list[str]:
    """Every word of the text, identifiers split into their parts, lower-cased."""
    words: list[str] = []
    for match in _WORD.finditer(text):
        token = match.group()
        parts = _CAMEL_PART.findall(token)
        words.extend(part.lower() for part in parts if part)
    return words


def terms(text: str) -> set[str]:
    """Stemmed content words of the text (filler words dropped)."""
    return {stem(w) for w in identifier_words(text) if w not in STOPWORDS and len(w) > 1}


def question_terms(question: str) -> list[str]:
    """The question's content words, stemmed, in order of first appearance."""
    seen: dict[str, None] = {}
    for word in identifier_words(question):
        if word in STOPWORDS or len(word) < 2:
            continue
        seen.setdefault(stem(word), None)
    return list(seen)
