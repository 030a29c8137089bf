"""What the generic extractor needs to know about one language besides its query files.

Query files live in `queries/<language>/` and use these capture names:

- definitions.scm: `@definition.class` / `@definition.function` on a definition node, with `@name`
  and `@body` in the same match; `@wrapper` + `@wrapped` for a node (decorators) that extends the
  wrapped definition's range to its own start.
- docstrings.scm: `@docstring` on a string literal; it documents the nearest enclosing definition,
  or the module when there is none.
- imports.scm: `@import.statement`, `@import.module` (as written, possibly relative), optional
  `@import.name`, `@import.alias` and `@import.wildcard`.
- calls.scm: `@call.target` on the callee expression.
- inheritance.scm: `@inherits.class` on the class node, `@inherits.base` on each base expression.

A missing query file means the language has no such facts (for example no inheritance).
"""

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter_language_pack import SupportedLanguage


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """A language's grammar, naming rules and literal handling; adding a language adds one."""

    name: str
    grammar: SupportedLanguage
    module_name_for_path: Callable[[str], str]
    """Maps a repository-relative path to the module's dotted name."""
    is_package_path: Callable[[str], bool]
    """Whether the file is a package's own module (relative imports resolve from it)."""
    resolve_import: Callable[[str, str, bool], str | None]
    """(module as written, importing module's name, is_package) -> absolute name, or None."""
    docstring_text: Callable[[str], str]
    """Turns a docstring literal's source text into the cleaned docstring."""
    separator: str = "."
    """Joins the segments of qualified names and member accesses."""
    instance_receivers: frozenset[str] = frozenset()
    """Names that mean "this instance/class" inside a method (`self`, `cls`)."""
    comment_node_types: frozenset[str] = frozenset({"comment"})
    atomic_node_types: frozenset[str] = frozenset({"string"})
    """Nodes whose source text is kept verbatim inside a whitespace-normalised signature."""
    signature_terminators: frozenset[str] = frozenset()
    """Tokens ending a definition header that are not part of the signature (Python's `:`)."""
