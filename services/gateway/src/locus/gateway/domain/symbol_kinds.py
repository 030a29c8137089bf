"""Families of symbol kinds: the ranking treats kinds by what they are for, so the kinds of
languages beyond Python (constructors, interfaces, structs, enums, traits, namespaces) count
wherever their Python kin do, and scope names written with `::` or `\\` read as dotted ones."""

from __future__ import annotations

import functools

CALLABLE_KINDS = frozenset({"function", "method", "constructor"})
MEMBER_KINDS = frozenset({"method", "constructor"})  # callables that belong to a type
CONTAINER_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
MODULE_KINDS = frozenset({"module", "namespace"})  # a namespace is scored like a module
DOCUMENT_KINDS = frozenset({"section"})  # a document's heading (domain/document_sections)
SIGNATURE_KIND = "signature"
"""A method declared without a body (an interface's, an abstract one): never a candidate of the
ranking (the model was trained without them, and a fix changes the bodies that implement it);
impact and the symbol commands show them. Type aliases (``type_alias``) and constants
(``constant``) are no candidates either: Locate's symbol lookups and graph hop leave them all
out (``without_signatures``)."""

# The learned ranker's kind columns (kind_function, kind_method, kind_class, kind_module)
# predate the other kinds and a trained model's feature list is fixed: each new kind takes the
# column of its kin (a constructor is a method, containers are classes, a namespace a module);
# a document section has no kin among them and sets none.
_FEATURE_KINDS = {
    "constructor": "method",
    "interface": "class",
    "struct": "class",
    "enum": "class",
    "trait": "class",
    "namespace": "module",
}


def feature_kind(kind: str) -> str:
    """The one-hot kind column a symbol of ``kind`` sets: function, method, class or module."""
    return _FEATURE_KINDS.get(kind, kind)


def dotted_scope(scope_name: str) -> str:
    """`Parser::parse` (Rust, C++, Ruby, PHP members), `App\\Repo` (PHP namespaces) →
    Parser.parse, App.Repo; dotted names as they are."""
    return scope_name.replace("::", ".").replace("\\", ".")


@functools.lru_cache(maxsize=1 << 14)
def member_owner(scope_name: str) -> str:
    """The dotted name of what a member belongs to: `Parser::parse` -> `Parser`,
    `pkg.mod.Client.get` -> `pkg.mod.Client`; "" for a scope without one."""
    scope = dotted_scope(scope_name)
    return scope.rsplit(".", 1)[0] if "." in scope else ""
