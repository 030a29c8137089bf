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
)

SPECS = (CSHARP,)
