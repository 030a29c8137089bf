"""How a cue of the question matches a candidate: hit aggregation, paths against files,
identifiers and dotted names against symbol names, name words."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from locus.gateway.domain.question_cues import split_identifier
from locus.gateway.domain.ranking_types import SymbolRef
from locus.gateway.domain.symbol_kinds import dotted_scope


def aggregate_hits(scores: Iterable[float], bonus: float, cap: float) -> float:
    """Best hit plus a bonus for further hits: max + min(cap, bonus * sum(the others))."""
    ordered = sorted(scores, reverse=True)
    if not ordered:
        return 0.0
    return ordered[0] + min(cap, bonus * sum(ordered[1:]))


def match_path(cue: str, relative_path: str) -> str:
    """How a path from the question names ``relative_path``: "exact" (equal, or the cue is a
    longer path ending in it), "suffix" (a tail of it), "basename", "directory" or ""."""
    cue = cue.strip().replace("\\", "/")
    while cue.startswith("./"):
        cue = cue[2:]
    path = relative_path.strip("/")
    if not cue or not path:
        return ""
    if cue == path or cue.endswith("/" + path):
        return "exact"
    if path.endswith("/" + cue):
        return "suffix" if "/" in cue else "basename"
    if _shared_tail(cue, path) >= 2:
        # An installed copy's path in a traceback (.../site-packages/pkg/mod.py) names the
        # repository's src/pkg/mod.py: a package directory and the file name in common.
        return "suffix"
    directory = cue.rstrip("/")
    is_directory = bool(directory) and "." not in directory.rsplit("/", 1)[-1]
    if is_directory and ("/" + directory + "/") in ("/" + path):
        return "directory"
    return ""


def name_words_of(name: str) -> list[str]:
    """The words of a symbol name worth matching: `_eval_subs` → eval, subs."""
    return [p for p in split_identifier(name)[1:] or [name.lower()] if len(p) > 2]


def module_of_path(relative_path: str) -> str:
    """`src/pkg/mod.py` → src/pkg/mod, `pkg/sub/__init__.py` → pkg/sub ("" without extension)."""
    path = relative_path.strip("/")
    stem, dot, _ = path.rpartition(".")
    if not dot or not stem:
        return ""
    return stem.removesuffix("/__init__").removesuffix("/index")


def _shared_tail(first: str, second: str) -> int:
    """How many trailing path segments two paths have in common."""
    a, b = first.split("/"), second.split("/")
    shared = 0
    while shared < min(len(a), len(b)) and a[-1 - shared] == b[-1 - shared]:
        shared += 1
    return shared


@functools.lru_cache(maxsize=1 << 14)
def identifier_part_of(identifiers: tuple[str, ...], name: str) -> tuple[str, float] | None:
    """The identifier whose words run inside the words of the longer ``name`` (`world_to_pixel`
    in `world_to_pixel_values`, `subs` in `_eval_subs`), with the share of the name's words it
    covers (the largest share wins). Identifiers shorter than four characters are left out.
    Cached: names repeat across a question's candidates."""
    name_parts = split_identifier(name)[1:]
    best: tuple[str, float] | None = None
    for identifier in identifiers:
        parts = split_identifier(identifier)[1:] or [identifier.lower()]
        if len(identifier) < 4 or len(parts) >= len(name_parts):
            continue
        size = len(parts)
        if any(name_parts[i : i + size] == parts for i in range(len(name_parts) - size + 1)):
            share = size / len(name_parts)
            if best is None or share > best[1]:
                best = (identifier, share)
    return best


@functools.lru_cache(maxsize=1 << 14)
def uses_word(words: frozenset[str], part: str) -> bool:
    """The question uses ``part`` as a word or as the stem of one (cancel → cancelling).
    Cached: one question's words meet the same name parts for hundreds of candidates."""
    return part in words or (len(part) >= 4 and any(w.startswith(part) for w in words))


def dotted_matches(dotted_name: str, ref: SymbolRef) -> bool:
    return names_dotted(dotted_name, ref.qualified_name, ref.scope_name)


@functools.lru_cache(maxsize=1 << 14)
def names_dotted(dotted_name: str, qualified_name: str, scope_name: str) -> bool:
    for name in (qualified_name, scope_name):
        name = dotted_scope(name)
        if name and (name == dotted_name or name.endswith("." + dotted_name)):
            return True
    return False
