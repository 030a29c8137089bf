"""Kotlin's `LanguageSpec`: classes, interfaces, enum classes, objects and functions qualified
by the declared package (`com.acme.billing.Invoice.total`, top-level `com.acme.billing.fn`);
companion object members are qualified under their class; KDoc `/** */` as docstrings."""

from locus.ast.domain.specs._jvm import jvm_spec

KOTLIN = jvm_spec(
    "kotlin",
    "kotlin",
    comment_node_types=frozenset({"line_comment", "multiline_comment"}),
    # `nullable_type` holds no `?` token of its own: read whole, `Any?` keeps its mark.
    atomic_node_types=frozenset({"string_literal", "nullable_type"}),
    # A body-less class's header ends before its last part (`: Base(id)`, `, Payable`).
    signature_terminators=frozenset({":", ","}),
    # tree-sitter-kotlin keeps a comment after the package line or the last import inside it.
    doc_comment_holders=frozenset({"package_header", "import_list", "import_header"}),
)

SPECS = (KOTLIN,)
