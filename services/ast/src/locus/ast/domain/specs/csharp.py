"""C#: namespaces as written (`Acme.Billing.Invoice.Total`), `using` directives, XML docs.

A file's module is its path (`src/Billing/Invoice.cs`); definitions are qualified by their
namespace: a file-scoped `namespace A.B;` prefixes the whole file, block `namespace A.B { }`
declarations are namespace containers. Unqualified references resolve to the enclosing type's
members, then to the enclosing namespace (another file may define the name there).
"""

import html
import re
from collections.abc import Sequence

from locus.ast.domain.language_spec import (
    LanguageSpec,
    clean_doc_comment,
    declared_namespace,
    import_as_written,
    path_module_name,
    without_angle_arguments,
)

# `#if X` / `#elif X` / `#else` / `#endif` lines: where they split a declaration (an interface
# whose members have default bodies only `#if FEATURE`), tree-sitter reads the rest as errors.
_CONDITIONAL = re.compile(rb"[ \t]*#[ \t]*(if|elif|else|endif)\b")


def _blank(line: bytes) -> bytes:
    """Spaces for every byte but the line's end."""
    body = line.rstrip(b"\r\n")
    return b" " * len(body) + line[len(body) :]


def csharp_parse_source(source: bytes) -> bytes:
    """What tree-sitter parses: conditional directives blanked, and of each `#if` the first
    branch kept (`#elif` / `#else` branches blanked), as a build with every symbol of the
    first branch defined would read it; the same length and lines as the source."""
    if b"#" not in source:
        return source
    lines = source.splitlines(keepends=True)
    dropping: list[bool] = []  # per open #if: whether the current branch is a later one
    changed = False
    for index, line in enumerate(lines):
        directive = _CONDITIONAL.match(line)
        if directive is not None:
            word = directive.group(1)
            if word == b"if":
                dropping.append(False)
            elif word in (b"elif", b"else") and dropping:
                dropping[-1] = True
            elif word == b"endif" and dropping:
                dropping.pop()
        if directive is not None or any(dropping):
            lines[index] = _blank(line)
            changed = True
    return b"".join(lines) if changed else source


_XML_REFERENCE = re.compile(
    r"""<(?:see|seealso|paramref|typeparamref)\s+(?:cref|name|langword|href)\s*=\s*"(?:\w:)?([^"]*)"\s*/>"""
)
_XML_NAMED = re.compile(r"""<(?:param|typeparam)\s+name\s*=\s*"([^"]*)"\s*>""")
_XML_RETURNS = re.compile(r"<returns>")
_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def csharp_reference(reference: str) -> str:
    """`Parse<T>` -> `Parse`; a member of a variable or field (`_repository.Save`,
    `invoice.Total`: camelCase by convention) names nothing resolvable -> ""."""
    text = without_angle_arguments(reference).replace(" ", "")
    head, dot, _ = text.partition(".")
    if dot and head not in ("this", "base") and (head[:1].islower() or head[:1] == "_"):
        return ""
    return text


def csharp_doc_text(comments: Sequence[str]) -> str:
    """`/// <summary>Text</summary>` -> `Text`; `<param name="x">d</param>` -> `x: d`,
    `<see cref="T:A.B"/>` -> `A.B`; other tags dropped, entities unescaped."""
    text = clean_doc_comment(comments)
    text = _XML_REFERENCE.sub(r"\1", text)
    text = _XML_NAMED.sub(r"\1: ", text)
    text = _XML_RETURNS.sub("Returns: ", text)
    text = _XML_TAG.sub("", text)
    lines = [html.unescape(line).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


CSHARP = LanguageSpec(
    name="csharp",
    grammar="csharp",
    module_name_for_path=path_module_name,  # `src/Billing/Invoice.cs`
    resolve_import=import_as_written,  # `using` names are absolute (`System.Text`)
    separator=".",
    # The file-scoped namespace; block `namespace A.B { }` declarations are containers.
    definition_namespace=declared_namespace,
    qualified_name_separators=(".",),
    instance_receivers=frozenset({"this", "base"}),
    same_namespace_lookup=True,
    enclosing_namespace_lookup=True,
    reference_normalizer=csharp_reference,
    overloads=True,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=frozenset(
        {"string_literal", "verbatim_string_literal", "raw_string_literal", "character_literal"}
    ),
    doc_comment_prefixes=("///",),
    doc_comment_text=csharp_doc_text,
    parse_source=csharp_parse_source,
)

SPECS = (CSHARP,)
