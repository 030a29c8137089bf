"""The code-aware analyzer shared by indexing and querying: identifiers are split on
camelCase, PascalCase, snake_case, acronyms, digits and path separators, lowercased, and a
multi-part identifier also yields its parts joined, so ``HTTPClient``, ``HttpClient``,
``http_client`` and ``http client`` all meet on ``http`` + ``client`` (and the first three on
``httpclient``, which ranks exact identifier matches higher). A word with a plural or verb
ending also yields its light stem (``uploading``, ``uploads`` → ``upload``), at the same position,
so plain-language queries find identifiers.

Chinese, Japanese and Korean are written without spaces between words (and Korean attaches its
particles to them), so a run of those characters is cut into overlapping bigrams, as Lucene's
CJK bigram filter does (without its width folding): ``输入框太小`` → ``输入``, ``入框``, ``框太``,
``太小`` (a lone character stays a unigram, so a one-character query meets only a one-character
run), and a run glued to Latin letters or digits (``input框``) is split from them first.
Without it a report written in Chinese is one or two overlong "words" that match nothing, and
Locate answers with no location at all."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

MAX_TOKEN_CHARS = 40  # longer runs are hashes, base64 or minified code: noise for BM25

_IDENTIFIER = re.compile(r"\w+")
# Parts of an ASCII identifier, in order: an acronym followed by a capitalised word
# (HTTP|Client), a capitalised or lowercase word, a trailing acronym, a digit run.
_ASCII_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Han (with its extensions and compatibility ideographs), Hiragana, Katakana (full and half
# width), Bopomofo and Hangul: the scripts written without spaces between words.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uffdc"
    "\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")


@dataclass(frozen=True, slots=True)
class CodeToken:
    text: str
    position: int
    start: int  # character offsets in the analysed text
    end: int


def code_tokens(text: str) -> list[CodeToken]:
    """Tokens with positions and character offsets, in text order."""
    return [CodeToken(*token) for token in code_token_tuples(text)]


def code_token_tuples(text: str) -> list[tuple[str, int, int, int]]:
    """``code_tokens`` as (text, position, start, end) tuples."""
    tokens: list[tuple[str, int, int, int]] = []
    append = tokens.append
    position = 0
    for identifier in _IDENTIFIER.finditer(text):
        parts, joined = _analysed_word(identifier.group())
        if not parts:
            continue
        base = identifier.start()
        first_position = position
        for part, stem, start, end in parts:
            append((part, position, base + start, base + end))
            if stem:
                append((stem, position, base + start, base + end))
            position += 1
        if joined:
            append((joined, first_position, base, identifier.end()))
    return tokens


def indexed_terms(text: str) -> str:
    """The tokens of ``code_tokens`` as one space-separated string, in no useful order: the
    form an index that keeps only term frequencies (no positions, no offsets) needs, cut by a
    whitespace tokenizer on the index's side. One cached string per distinct word makes this
    several times faster than building token objects, and every term and count is the same."""
    return " ".join(map(_word_terms, _IDENTIFIER.findall(text)))


@functools.lru_cache(maxsize=1 << 18)
def _word_terms(word: str) -> str:
    parts, joined = _analysed_word(word)
    terms = []
    for part, stem, _, _ in parts:
        terms.append(part)
        if stem:
            terms.append(stem)
    if joined:
        terms.append(joined)
    return " ".join(terms)


@functools.lru_cache(maxsize=1 << 18)
def _analysed_word(word: str) -> tuple[tuple[tuple[str, str, int, int], ...], str]:
    """One ``\\w+`` run's parts as (lowercased part, its stem or "", start, end), and the
    parts joined ("" for a one-part word or a joined form over the length limit). Code
    repeats its identifiers, so this is cached."""
    spans = [(a, b) for a, b in _split_identifier(word) if b - a <= MAX_TOKEN_CHARS]
    parts = []
    for start, end in spans:
        part = word[start:end].lower()
        stem = light_stem(part)
        parts.append((part, stem if stem != part else "", start, end))
    joined = ""
    if len(spans) > 1 and not _CJK_RUN.search(word):
        joined = "".join(word[a:b] for a, b in spans).lower()
        if len(joined) > MAX_TOKEN_CHARS:
            joined = ""
    return tuple(parts), joined


def light_stem(word: str) -> str:
    """Strip one English plural or verb ending (-ies, -es, -s, -ing, -ed) and then a final -e,
    so ``parse``/``parsed``/``parses`` meet on ``pars``; conservative on short words and on
    code words like ``class``, ``status`` or ``bus``."""
    if len(word) <= 4 or not word.isalpha():
        return word
    stem = _strip_ending(word)
    if stem.endswith("e") and len(stem) > 4:
        stem = stem[:-1]
    return stem


def _strip_ending(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    for ending in ("ing", "ed"):
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 3 and any(v in stem for v in "aeiouy"):
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                return stem[:-1]  # running → run, stopped → stop
            return stem
    return word


def _split_identifier(word: str) -> list[tuple[int, int]]:
    """Character ranges of the parts of one ``\\w+`` run."""
    if word.isascii():
        return [match.span() for match in _ASCII_PART.finditer(word)]
    if _CJK_RUN.search(word):
        return _split_cjk(word)
    return _split_other(word)


def _split_cjk(word: str) -> list[tuple[int, int]]:
    """A word with CJK runs: each run's overlapping bigrams (a lone character as itself), and
    the parts of the text between runs as any other word's."""
    parts: list[tuple[int, int]] = []
    done = 0
    for run in _CJK_RUN.finditer(word):
        start, end = run.span()
        if start > done:
            parts.extend((done + a, done + b) for a, b in _split_identifier(word[done:start]))
        if end - start == 1:
            parts.append((start, end))
        else:
            parts.extend((index, index + 2) for index in range(start, end - 1))
        done = end
    if done < len(word):
        parts.extend((done + a, done + b) for a, b in _split_identifier(word[done:]))
    return parts


def _split_other(word: str) -> list[tuple[int, int]]:
    # Any script: split on underscores, letter/digit changes, lower→Upper and ACRONYM|Word.
    parts: list[tuple[int, int]] = []
    start = 0
    for index, char in enumerate(word):
        if char == "_":
            if index > start:
                parts.append((start, index))
            start = index + 1
            continue
        if index == start:
            continue
        previous = word[index - 1]
        following = word[index + 1] if index + 1 < len(word) else ""
        if (
            previous.isdigit() != char.isdigit()
            or (char.isupper() and not previous.isupper() and not previous.isdigit())
            or (char.isupper() and previous.isupper() and following.islower())
        ):
            parts.append((start, index))
            start = index
    if start < len(word):
        parts.append((start, len(word)))
    return parts


def analyze(text: str) -> list[str]:
    """Just the token texts, in order (with repeats)."""
    return [token.text for token in code_tokens(text)]


def query_terms(text: str, *, limit: int = 256) -> list[str]:
    """Distinct tokens of a query in first-seen order, at most ``limit``."""
    return list(dict.fromkeys(analyze(text)))[:limit]
