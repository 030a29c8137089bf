"""Java's `LanguageSpec`: classes, records, interfaces, annotation types, enums, methods and
constructors qualified by the declared package (`com.acme.billing.Invoice.total`, constructor
`com.acme.billing.Invoice.Invoice`), Javadoc `/** */` as docstrings, type and static imports."""

from locus.ast.domain.specs._jvm import jvm_spec

JAVA = jvm_spec(
    "java",
    "java",
    comment_node_types=frozenset({"line_comment", "block_comment"}),
    atomic_node_types=frozenset({"string_literal", "character_literal"}),
)

SPECS = (JAVA,)
