"""Validation of request values shared by every RPC: questions, counts with defaults and limits,
path prefixes, ratings and comments. Raises InvalidRequest with a message a person can act on."""

from __future__ import annotations

from locus.gateway.domain.errors import InvalidRequest

# A pasted bug report with its stack trace, or a whole log, is a question too (a long one is
# reduced to what matters before it is searched: question_digest). The training split holds a
# real report of 108,630 characters (yt-dlp's, with its verbose log), so the cap leaves room.
MAX_QUESTION_CHARS = 250_000
MAX_COMMENT_CHARS = 4000
MAX_PATH_PREFIX_CHARS = 1000
MAX_ID_CHARS = 200
MIN_RATING = 1
MAX_RATING = 5


def validate_question(question: str) -> str:
    text = question.strip()
    if not text:
        raise InvalidRequest("question must not be empty")
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidRequest(
            f"question is {len(text)} characters long; the limit is {MAX_QUESTION_CHARS}: "
            "quote the relevant part of the log and its stack trace"
        )
    return text


def bounded_count(name: str, value: int, *, default: int, limit: int) -> int:
    """``0`` means the default; negative or above ``limit`` is refused."""
    if value < 0:
        raise InvalidRequest(f"{name} must not be negative (got {value})")
    if value == 0:
        return default
    if value > limit:
        raise InvalidRequest(f"{name} must be at most {limit} (got {value})")
    return value


def page_size(value: int, *, default: int, limit: int) -> int:
    """A page's size as every list RPC reads it (``PageRequest``: "capped by the server"):
    ``0`` means the default, more than ``limit`` gets ``limit`` (the page token reads on);
    negative is refused."""
    if value < 0:
        raise InvalidRequest(f"page.page_size must not be negative (got {value})")
    return min(value, limit) if value else default


def normalize_path_prefix(prefix: str) -> str:
    """A repository-relative POSIX prefix: no leading ``./`` or ``/``, no ``..`` segment."""
    text = prefix.strip().replace("\\", "/")
    if len(text) > MAX_PATH_PREFIX_CHARS:
        raise InvalidRequest(f"path_prefix is longer than {MAX_PATH_PREFIX_CHARS} characters")
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if ".." in text.split("/"):
        raise InvalidRequest(
            f"path_prefix {prefix!r} must be relative to the source root, without '..'"
        )
    return text


def require_id(name: str, value: str) -> str:
    text = value.strip()
    if not text:
        raise InvalidRequest(f"{name} must not be empty")
    if len(text) > MAX_ID_CHARS:
        raise InvalidRequest(f"{name} is longer than {MAX_ID_CHARS} characters")
    return text


def validate_rating(rating: int) -> int:
    if not MIN_RATING <= rating <= MAX_RATING:
        raise InvalidRequest(f"rating must be between {MIN_RATING} and {MAX_RATING} (got {rating})")
    return rating


def validate_comment(comment: str) -> str:
    if len(comment) > MAX_COMMENT_CHARS:
        raise InvalidRequest(
            f"comment is {len(comment)} characters long; the limit is {MAX_COMMENT_CHARS}"
        )
    return comment
