"""What a name written in a C# file may mean, where the file alone cannot tell: the ast service
qualifies a name no definition of the file has by the file's namespace (`Acme.App.Invoice` for
`Invoice` in `namespace Acme.App`), but C# also looks in the enclosing namespaces (`Acme`), in
each namespace the file imports with `using Acme.Billing;` (or any file of the project with
`global using`) and in the global namespace. The
graph (impact) and the ast store try these, in that order, when the first guess names nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Languages whose names resolve this way (C++ looks names up similarly, through `using
# namespace`, but its files are resolved as written).
NAMESPACE_LOOKUP_LANGUAGES = frozenset({"csharp"})
# The written name of an import every file of the project takes (`global using Serilog.Core;`
# is `global::Serilog.Core.*`): the ast service writes it, the lookups read it.
GLOBAL_IMPORT_PREFIX = "global::"


def is_global_import(target_name: str) -> bool:
    return target_name.startswith(GLOBAL_IMPORT_PREFIX)


_TYPE_ARGUMENTS = re.compile(r"<[^<>]*>")


def written_reference(target_name: str) -> str:
    """`Cache<Dictionary<K, V>>.Get` -> `Cache.Get`: the name without its type arguments."""
    text = target_name.replace(" ", "")
    while "<" in text:
        shorter = _TYPE_ARGUMENTS.sub("", text)
        if shorter == text:
            break
        text = shorter
    return text


def namespace_candidates(
    target_qualified_name: str, target_name: str, usings: Sequence[str]
) -> list[str]:
    """The other names a reference (written ``target_name``, qualified by its file's namespace
    as ``target_qualified_name``) may mean, in lookup order: the enclosing namespaces outward,
    the file's `using` namespaces in order, the global namespace. Empty when the target is not
    such a guess (a member of `this`, of a typed variable, of an imported alias)."""
    written = written_reference(target_name)
    if not written or not target_qualified_name.endswith("." + written):
        return []
    parts = target_qualified_name[: -len(written) - 1].split(".")
    enclosing = [".".join([*parts[:cut], written]) for cut in range(len(parts) - 1, 0, -1)]
    imported = [f"{namespace}.{written}" for namespace in usings if namespace]
    return [
        name
        for name in dict.fromkeys([*enclosing, *imported, written])
        if name != target_qualified_name
    ]
