"""Cues in a question that point at code: identifiers, dotted names, file paths and stack-trace
frames, found in prose and in markdown code spans. The ranking boosts the symbols and files they
name; the service looks the names up in the symbol index."""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from locus.codepaths import PathRole, classify_path
from locus.gateway.domain.stack_frames import (
    CODE_EXTENSIONS,
    StackFrame,
    clean_path,
    code_locations,
    find_frames,
    package_path,
)

MAX_CUES_PER_KIND = 32

KEYWORDS = frozenset(
    {
        # python
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
        "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
        "with", "yield", "None", "True", "False", "self", "cls", "print", "len", "str", "int",
        "float", "bool", "list", "dict", "set", "tuple", "bytes", "object", "type", "range",
        # c-family, java, js, go, rust
        "abstract", "boolean", "byte", "case", "catch", "char", "const", "default", "do",
        "double", "enum", "export", "extends", "final", "func", "function", "goto", "implements",
        "instanceof", "interface", "let", "long", "new", "null", "package", "private",
        "protected", "public", "short", "static", "super", "switch", "this", "throw", "throws",
        "typeof", "undefined", "var", "void", "volatile", "true", "false", "nil", "fn", "impl",
        "mut", "pub", "struct", "trait", "use", "mod", "match", "string", "error", "err",
        # traceback and shell noise
        "Traceback", "most", "recent", "call", "last", "line", "File", "the", "at", "echo",
    }
)  # fmt: skip

_TEST_WORDS = frozenset(
    {
        "test", "tests", "tested", "testing", "pytest", "unittest", "jest", "junit", "mocha",
        "conftest", "fixture", "fixtures", "mock", "mocks", "mocking", "spec", "specs",
        "testcase", "testcases",
    }
)  # fmt: skip

ABOUT_TESTS_MAX_CHARS = 300
_ASKS_FOR_TESTS = re.compile(
    r"\b(?:which|what|where|find|list|show|add|write|missing)\b[^.?!\n]{0,40}\btests?\b"
    r"|\btest coverage\b",
    re.I,
)

# A question that asks what the project's documentation says: it names the documentation
# (docs, README, a manual or guide read or quoted) rather than code. "doc" alone is left out
# (docstrings and doc comments are code), and so is "manual" as an adjective ("manual retry").
_ASKS_FOR_DOCS = re.compile(
    r"\b(?:documentation|documented|docs|readme|handbook|tutorial|faq)\b"
    r"|\b(?:in|per|from|to|of)\s+(?:the|our|this)\s+(?:\w+\s+)?(?:manual|guide)\b"
    r"|\b(?:the|our|this)\s+(?:\w+\s+)?(?:manual|guide)\s+(?:says?|said|describes?|explains?"
    r"|mentions?|covers?|recommends?)\b"
    r"|\b(?:user|developer|admin|installation|upgrade)\s+(?:manual|guide)\b",
    re.I,
)

# Asking outright what the documentation says, in a question of any length ("what does the
# manual say about upgrades?", "where is X documented?", "according to the docs, ...").
_ASKS_DOCS_OUTRIGHT = re.compile(
    r"\bwhat\s+(?:does|do|did)\s+(?:the|our|this|its)\s+(?:\w+\s+)?"
    r"(?:documentation|docs|readme|manual|guide|handbook)\s+(?:says?|said|tells?|recommends?)\b"
    r"|\b(?:where|how)\s+(?:is|are|do|does)\b[^.?!\n]{0,60}\bdocumented\b"
    r"|\baccording\s+to\s+(?:the|our|this)\s+(?:\w+\s+)?"
    r"(?:documentation|docs|readme|manual|guide)\b",
    re.I,
)
# Links are left out when looking for those words: a bug report cites docs.python.org or a
# project's /docs/ page as a reference, not as the thing it asks about.
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.I)

_NOT_DOTTED = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a", "cf", "approx"})

_FENCED = re.compile(r"```(?P<body>.*?)(?:```|\Z)", re.S)
_INLINE = re.compile(r"`(?P<body>[^`\n]+)`")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
# A link to a file in a code host: .../blob/<ref>/<path>#L35 (GitHub, Gitea) or
# .../-/blob/<ref>/<path>#L35 (GitLab); the ref is one segment (a branch, tag or commit).
_CODE_LINK = re.compile(
    r"https?://\S+?/(?:-/)?blob/[^/\s]+/(?P<path>[^\s#?)\]>\"']+)(?:#L(?P<line>\d+))?", re.I
)
_TOKEN = re.compile(r"[A-Za-z0-9_$@./\\+-]+")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")
_DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$")
_CAMEL_HUMP = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
_T = TypeVar("_T", bound=Hashable)


@dataclass(frozen=True)
class QuestionCues:
    identifiers: tuple[str, ...] = ()
    dotted_names: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    frames: tuple[StackFrame, ...] = ()
    about_tests: bool = False
    about_docs: bool = False  # it asks what the documentation says (_ASKS_FOR_DOCS)
    # Module paths the question names (`from pkg.sub.mod import X`, `pkg.sub.mod.X`), as
    # slash-separated paths without extension: pkg/sub/mod. Matched against file paths.
    module_paths: tuple[str, ...] = ()
    # Every word of the question, lower-cased, identifiers also split into their parts.
    words: frozenset[str] = frozenset()
    # The identifiers and dotted names its title (the first of several lines) uses.
    in_title: frozenset[str] = frozenset()
    question_chars: int = 0  # the length of the question the cues come from
    has_code_block: bool = False  # a fenced block or an indented traceback

    @property
    def is_empty(self) -> bool:
        return not (self.identifiers or self.dotted_names or self.paths or self.frames)

    def lookup_names(self, limit: int) -> list[str]:
        """Names worth an exact symbol lookup: frame functions, dotted names, identifiers."""
        names = [f.function for f in self.frames if _IDENTIFIER.match(f.function or "-")]
        names += list(self.dotted_names) + list(self.identifiers)
        return _unique(n for n in names if n not in KEYWORDS)[:limit]


def extract_cues(question: str) -> QuestionCues:
    """Find what in ``question`` names code. Deterministic: cues keep their first-seen order."""
    links = list(_CODE_LINK.finditer(question))
    frames = _frames(question, links)
    code_spans: list[str] = []
    fenced_blocks: list[str] = []

    def keep_block(match: re.Match[str]) -> str:
        fenced_blocks.append(_strip_language_tag(match.group("body")))
        return " "

    def keep_code(match: re.Match[str]) -> str:
        code_spans.append(match.group("body"))
        return " "

    prose = _INLINE.sub(keep_code, _FENCED.sub(keep_block, question))
    identifiers: list[str] = []
    dotted: list[str] = []
    paths: list[str] = []
    for text, kind in [
        (prose, "prose"),
        *((span, "inline") for span in code_spans),
        *((block, "fenced") for block in fenced_blocks),
    ]:
        _scan_tokens(_URL.sub(" ", text), kind, identifiers, dotted, paths)
    code_spans += fenced_blocks
    paths += [p for f in frames for p in (f.path, package_path(f)) if p]
    paths += [
        clean_path(m.group("path")) for m in links if "." in m.group("path").rsplit("/", 1)[-1]
    ]
    unique_paths = tuple(_unique(paths)[:MAX_CUES_PER_KIND])
    modules = _imported_modules("\n".join(code_spans) + "\n" + prose) + [
        m for name in dotted for m in _module_paths_of(name)
    ]
    words = {w.lower() for w in re.findall(r"[A-Za-z_]+", question)}
    mentions_tests = (
        bool(words & _TEST_WORDS)
        or any(w.startswith("test_") or w.endswith(("_test", "_tests")) for w in words)
        or any(classify_path(p) == PathRole.TEST for p in unique_paths)
    )
    # A short question that mentions tests asks about them ("which tests cover refunds?"); a
    # pasted bug report mentions tests in passing (how it was found, which test fails) and
    # still asks where to change the code, unless it says so outright.
    about_tests = mentions_tests and (
        len(question) <= ABOUT_TESTS_MAX_CHARS or bool(_ASKS_FOR_TESTS.search(question))
    )
    return QuestionCues(
        identifiers=tuple(_unique(identifiers)[:MAX_CUES_PER_KIND]),
        # A frame's `Type.method` (Go's `pkg.(*T).Method`, C++'s `ns::T::f`, PHP's `Cls->m`
        # written the way symbols are named) after the dotted names the text spells out.
        dotted_names=tuple(
            _unique([*dotted, *(f.qualified_name for f in frames if f.qualified_name)])[
                :MAX_CUES_PER_KIND
            ]
        ),
        paths=unique_paths,
        frames=tuple(_unique(frames)[:MAX_CUES_PER_KIND]),
        about_tests=about_tests,
        about_docs=_asks_about_docs(question),
        module_paths=tuple(_unique(modules)[:MAX_CUES_PER_KIND]),
        words=frozenset(w for token in _WORD.findall(question) for w in split_identifier(token)),
        in_title=_named_in_title(question, identifiers, dotted),
        question_chars=len(question),
        has_code_block=bool(fenced_blocks) or bool(frames),
    )


def _asks_about_docs(question: str) -> bool:
    """A short question that names the documentation asks about it ("what do the docs say
    about upgrading?"); a pasted bug report names the docs in passing (what they promise, a
    link to them) and still asks where to change the code, unless it asks outright. Measured
    on the training split: the words alone matched 15% of its bug reports (112 of 736)."""
    text = _URL.sub(" ", question)
    if not _ASKS_FOR_DOCS.search(text):
        return False
    return len(question) <= ABOUT_TESTS_MAX_CHARS or bool(_ASKS_DOCS_OUTRIGHT.search(text))


def _named_in_title(question: str, identifiers: list[str], dotted: list[str]) -> frozenset[str]:
    """The identifiers and dotted names of the question that its title uses: the first line
    with words, when more lines follow (a bug report's summary)."""
    lines = [line for line in question.strip().splitlines() if _WORD.search(line)]
    if len(lines) < 2:
        return frozenset()
    tokens = set(re.findall(r"[A-Za-z_][\w.]*", lines[0]))
    tokens |= {t.rstrip(".") for t in tokens}
    return frozenset(name for name in (*identifiers, *dotted) if name in tokens)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_IMPORT = re.compile(
    r"^\s*(?:from\s+(?P<from>[A-Za-z_][\w.]*)\s+import[ \t]+(?P<names>[\w \t,()*]+)"
    r"|import\s+(?P<modules>[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))",
    re.M,
)


def split_identifier(token: str) -> list[str]:
    """`HTTPClient_retry` → httpclient_retry, http, client, retry (lower-cased; the whole
    token first, then its snake_case and camelCase parts)."""
    return list(_split_identifier(token))


@functools.lru_cache(maxsize=1 << 16)
def _split_identifier(token: str) -> tuple[str, ...]:
    # Cached: ranking splits the same few thousand names for every candidate symbol.
    parts = [
        p.lower() for piece in token.split("_") if piece for p in _IDENTIFIER_PART.findall(piece)
    ]
    whole = token.lower().strip("_")
    return tuple(_unique([whole, *parts]) if whole else parts)


def _imported_modules(text: str) -> list[str]:
    """Module paths of Python import statements: `from a.b import c` → a/b, a/b/c."""
    found: list[str] = []
    for match in _IMPORT.finditer(text):
        if match.group("from"):
            module = match.group("from").strip(".")
            if not module:
                continue
            found.append(module.replace(".", "/"))
            for name in re.findall(r"[A-Za-z_]\w*", match.group("names")):
                if name not in ("as", "import") and name[0].islower():
                    found.append(f"{module}/{name}".replace(".", "/"))
        else:
            for module in match.group("modules").split(","):
                module = module.strip()
                if "." in module:
                    found.append(module.replace(".", "/"))
    return found


def _module_paths_of(dotted: str) -> list[str]:
    """`pkg.mod.Class.method` → pkg/mod/Class/method, pkg/mod/Class, pkg/mod: every prefix of
    at least two segments that starts with a lower-case (module-like) name."""
    segments = dotted.split(".")
    if not segments[0][:1].islower() or segments[0] in ("self", "cls"):
        return []
    return ["/".join(segments[:end]) for end in range(len(segments), 1, -1)]


def looks_like_code(token: str) -> bool:
    """snake_case, SCREAMING_CASE, __dunder__, camelCase, PascalCase with a hump, HTTPServer."""
    if len(token) > 4 and token.startswith("__") and token.endswith("__"):
        return True
    core = token.strip("_")
    if not core or not any(c.isalpha() for c in core):
        return False
    return "_" in core or bool(_CAMEL_HUMP.search(core))


def _frames(text: str, code_links: Iterable[re.Match[str]]) -> list[StackFrame]:
    """Stack-trace frames of ``text``; ``code_links``: its _CODE_LINK matches (found once by
    the caller, which also takes their paths), a link with a line being a frame too; then
    any other `path:line` with a code extension."""
    frames = find_frames(text)
    known = {(f.path, f.line) for f in frames}
    for match in code_links:
        path = clean_path(match.group("path"))
        if match.group("line") and "." in path.rsplit("/", 1)[-1]:
            frames.append(StackFrame(path, int(match.group("line"))))
    for match in code_locations(text):
        path, line = clean_path(match.group("path")), int(match.group("line"))
        if (path, line) not in known:
            frames.append(StackFrame(path, line))
    return frames


def _scan_tokens(
    text: str, kind: str, identifiers: list[str], dotted: list[str], paths: list[str]
) -> None:
    """``kind``: "prose", "inline" (a `code span`) or "fenced" (a code block)."""
    in_code = kind != "prose"
    for match in _TOKEN.finditer(text):
        token = match.group().replace("\\", "/").rstrip(".-+").lstrip("-+")
        is_call = text[match.end() : match.end() + 1] == "("
        if not token:
            continue
        if "/" in token:
            path = _as_path(token)
            if path:
                paths.append(path)
            continue
        if _DOTTED.match(token) and token.lower() not in _NOT_DOTTED:
            extension = token.rsplit(".", 1)[1]
            if extension.lower() in CODE_EXTENSIONS and not is_call:
                paths.append(token)
                continue
            dotted.append(token)
            last = token.rsplit(".", 1)[1]
            if len(last) >= 3 and last not in KEYWORDS:
                identifiers.append(last)
            continue
        if not _IDENTIFIER.match(token) or token in KEYWORDS:
            continue
        # Prose words count only when they look like code; in code spans every name counts;
        # in code blocks a plain lower-case word only when it is called, since blocks also
        # hold shell output and logs ("No module named ...").
        plain_in_block = kind == "fenced" and token.isalpha() and token.islower()
        if looks_like_code(token) or (
            len(token) >= 3 and (is_call or (in_code and not plain_in_block))
        ):
            identifiers.append(token)


def _as_path(token: str) -> str:
    """A path-looking token: a code extension on its last segment, or at least two slashes."""
    path = clean_path(token)
    segments = [s for s in path.split("/") if s]
    if not segments or not any(c.isalpha() for c in segments[-1]):
        return ""
    last = segments[-1]
    has_extension = "." in last and last.rsplit(".", 1)[1].lower() in CODE_EXTENSIONS
    if has_extension or path.count("/") >= 2:
        return path
    return ""


def _strip_language_tag(body: str) -> str:
    """```python\\ncode``` → code (a one-word first line of a fenced block is its language)."""
    first, newline, rest = body.partition("\n")
    if newline and re.fullmatch(r"[\w+#.-]*", first.strip()):
        return rest
    return body


def _unique(items: Iterable[_T]) -> list[_T]:
    seen: set[_T] = set()
    result: list[_T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            result.append(item)
    return result
