"""A callable's parameters as its signature writes them: the list after its name, and how many
it takes. The ast service names overloads by their lists (`Mapper.read(JsonParser p)`) and
folds a declaration into the definition of the same arity in its file; impact matches an
override to the base overloads of its arity. Both read signatures the same way here."""

from __future__ import annotations

import re

_OPENING = {"(": ")", "[": "]", "{": "}", "<": ">"}


def parameter_list(signature: str, name: str) -> str:
    """The parameter list after ``name`` in ``signature`` as written, its brackets balanced
    (`(InputStream in, IOContext ctxt)`); "" when the signature shows none."""
    found = re.search(rf"(?<![\w$]){re.escape(name)}\s*(?:<[^()]*>\s*)?\(", signature)
    if found is None:
        return ""
    depth = 0
    for index in range(found.end() - 1, len(signature)):
        depth += {"(": 1, ")": -1}.get(signature[index], 0)
        if depth == 0:
            return signature[found.end() - 1 : index + 1]
    return ""


def arity(signature: str, name: str) -> int | None:
    """How many parameters ``signature`` declares after ``name`` (after its first `(` when the
    name is not followed by one: a constructor, an operator); None when it shows no list.
    Commas inside brackets (`Map<K, V> m`, `int (*cb)(int, int)`) separate nothing."""
    start = signature.find(name + "(")
    if start < 0:
        start = signature.find("(")
        if start < 0:
            return None
    else:
        start += len(name)
    count = 0
    seen_any = False
    closers: list[str] = []  # the brackets open at this point, innermost last
    for character in signature[start:]:
        if character in _OPENING:
            closers.append(_OPENING[character])
            continue
        if closers and character == closers[-1]:
            closers.pop()
            if not closers:
                return count + 1 if seen_any else 0
            continue
        if len(closers) == 1 and character == ",":
            count += 1
        elif closers and not character.isspace():
            seen_any = True
    return None
