"""What a source's version history says about its files: how often and how lately each one
changed, and how well the messages of the commits that changed it match a question.

Bug reports are about code that changes: a file many recent commits touched, or whose commits
were described in the words of the report ("fix timezone handling in the parser"), is more
likely to be the one a fix changes. Locate ranks with these as features of the learned ranker
(``locus.gateway.domain.features``); they are computed here, by the service that owns the
sources, from ``git log`` output (``adapters.git_history`` runs it).

Pure: text in, numbers out. The same code scores the training candidates offline
(``bench/ranker/history.py``), so the ranker learns from exactly what the service computes."""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from locus.config.redaction import redact

# One record per commit: NUL, then hash, committer time, subject and body separated by the
# unit separator, closed by the record separator; git then lists the changed paths.
GIT_LOG_FORMAT = "%x00%H%x1f%ct%x1f%s%x1f%b%x1e"
MESSAGES_PER_FILE = 30  # the newest commits' messages make a file's history document
MESSAGE_CHARS = 2000
QUESTION_TERMS = 512
HISTORY_FORMAT = 1  # of ChangeHistory.to_json
BM25_K1 = 1.2
BM25_B = 0.75

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP_WORDS = """a an and are as at be but by for if in into is it no not of on or such that the
    their
    then there these they this to was will with i you we he she me my our your its were been
    being have has had do does did so than too very can just should now from up out about what
    which who whom when where why how all any both each few more most other some only own same
    also would could"""
_STOP = frozenset(_STOP_WORDS.split())


def history_terms(text: str) -> list[str]:
    """Identifier-aware words: ``parseHTTPDate`` gives ``parsehttpdate``, ``parse``, ``http``,
    ``date``; lower-cased, English stop words and one-letter words dropped."""
    out: list[str] = []
    for word in _WORD.findall(text):
        lowered = word.lower()
        parts = [p.lower() for piece in word.split("_") if piece for p in _PART.findall(piece)]
        if len(parts) > 1:
            out.append(lowered)
            out.extend(p for p in parts if len(p) > 1 and p not in _STOP)
        elif len(lowered) > 1 and lowered not in _STOP:
            out.append(lowered)
    return out


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    time: int  # committer time, seconds since the epoch
    message: str
    paths: tuple[str, ...]


def parse_git_log(text: str) -> list[Commit]:
    """Commits of ``git log --name-only --format=GIT_LOG_FORMAT`` output, newest first."""
    commits = []
    for record in text.split("\x00")[1:]:
        head, _, names = record.partition("\x1e")
        fields = head.split("\x1f")
        if len(fields) < 4:
            continue
        sha, time, subject, body = fields[0], fields[1], fields[2], "\x1f".join(fields[3:])
        paths = tuple(line for line in names.split("\n") if line.strip())
        commits.append(
            Commit(
                sha=sha.strip(),
                time=int(time) if time.strip().isdigit() else 0,
                message=f"{subject}\n{body}".strip()[:MESSAGE_CHARS],
                paths=paths,
            )
        )
    return commits


@dataclass(frozen=True, slots=True)
class FileChanges:
    """One file's history among the commits read."""

    relative_path: str
    commits: int  # commits that changed it
    last_change: int  # how many commits ago it last changed: 0 = in the newest one
    change_percentile: float  # share of the history's files changed at most as often
    message_score: float  # BM25 of the question against its commits' messages


class ChangeHistory:
    """The commits read from one source (newest first), indexed by file: per file, how many
    commits changed it, how many commits ago the last did, and the term frequencies of its
    newest commits' messages (credentials in a message are redacted before it is cut into
    terms, so none reaches a stored history)."""

    def __init__(self, commits: Iterable[Commit], head: str = "") -> None:
        count: Counter[str] = Counter()
        last: dict[str, int] = {}
        messages: dict[str, list[int]] = {}  # path → its newest commits (indices into terms)
        terms_of: list[Counter[str]] = []  # per commit: its message's term frequencies
        for index, commit in enumerate(commits):
            terms_of.append(Counter(history_terms(redact(commit.message))))
            for path in commit.paths:
                count[path] += 1
                last.setdefault(path, index)
                kept = messages.setdefault(path, [])
                if len(kept) < MESSAGES_PER_FILE:
                    kept.append(index)
        documents: dict[str, Counter[str]] = {}
        for path, indices in messages.items():
            terms: Counter[str] = Counter()
            for index in indices:
                terms.update(terms_of[index])
            if terms:
                documents[path] = terms
        self._index(head, len(terms_of), count, last, documents)

    def _index(
        self,
        head: str,
        commits: int,
        count: Counter[str],
        last: dict[str, int],
        documents: dict[str, Counter[str]],
    ) -> None:
        self.head = head
        self.commits = commits
        self._count = count
        self._last = last
        self._documents = documents
        self._sorted_counts = sorted(count.values())
        self._lengths = {path: sum(terms.values()) for path, terms in documents.items()}
        document_frequency: Counter[str] = Counter()
        for terms in documents.values():
            document_frequency.update(terms.keys())
        n = len(documents)
        self._average_length = sum(self._lengths.values()) / n if n else 1.0
        self._idf = {
            term: math.log(1 + (n - df + 0.5) / (df + 0.5))
            for term, df in document_frequency.items()
        }

    def to_json(self) -> dict[str, Any]:
        """What the history needs to be rebuilt (``from_json``) without reading git again."""
        return {
            "format": HISTORY_FORMAT,
            "head": self.head,
            "commits": self.commits,
            "files": {
                path: [n, self._last[path], dict(self._documents.get(path, {}))]
                for path, n in self._count.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChangeHistory:
        """The history ``to_json`` wrote; ValueError when it is not one."""
        if data.get("format") != HISTORY_FORMAT:
            raise ValueError(f"history format {data.get('format')!r}, not {HISTORY_FORMAT}")
        try:
            count: Counter[str] = Counter()
            last: dict[str, int] = {}
            documents: dict[str, Counter[str]] = {}
            for path, (n, newest, terms) in data["files"].items():
                count[str(path)] = int(n)
                last[str(path)] = int(newest)
                if terms:
                    documents[str(path)] = Counter({str(t): int(f) for t, f in terms.items()})
            history = cls.__new__(cls)
            history._index(str(data["head"]), int(data["commits"]), count, last, documents)
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"malformed history: {error}") from error
        return history

    @property
    def files(self) -> int:
        return len(self._count)

    def changes(self, question: str, paths: Iterable[str]) -> dict[str, FileChanges]:
        """The history of each of ``paths`` that any commit read changed."""
        terms = list(dict.fromkeys(history_terms(question)))[:QUESTION_TERMS]
        weights = {t: self._idf[t] for t in terms if t in self._idf}
        out = {}
        for path in dict.fromkeys(paths):
            count = self._count.get(path)
            if not count:
                continue
            out[path] = FileChanges(
                relative_path=path,
                commits=count,
                last_change=self._last[path],
                change_percentile=bisect.bisect_right(self._sorted_counts, count)
                / len(self._sorted_counts),
                message_score=self._bm25(path, weights),
            )
        return out

    def _bm25(self, path: str, weights: Mapping[str, float]) -> float:
        document = self._documents.get(path)
        if not document or not weights:
            return 0.0
        norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[path] / self._average_length)
        score = 0.0
        for term, idf in weights.items():
            tf = document.get(term, 0)
            if tf:
                score += idf * tf * (BM25_K1 + 1) / (tf + norm)
        return score


def merge_changes(found: Iterable[Mapping[str, FileChanges]]) -> dict[str, FileChanges]:
    """Several sources' histories of one project: a path two sources share keeps the history
    with the better message score."""
    merged: dict[str, FileChanges] = {}
    for changes in found:
        for path, item in changes.items():
            kept = merged.get(path)
            if kept is None or item.message_score > kept.message_score:
                merged[path] = item
    return merged
