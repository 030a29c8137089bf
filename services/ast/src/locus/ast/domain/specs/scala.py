"""Scala's `LanguageSpec`: classes, case classes and objects (-> class), traits, enums and
`def`s qualified by the declared package (`com.acme.billing.Invoice.total`; a companion
object's members share its class's qualified name), Scaladoc `/** */` as docstrings."""

from locus.ast.domain.specs._jvm import jvm_spec

SCALA = jvm_spec(
    "scala",
    "scala",
    comment_node_types=frozenset({"comment", "block_comment"}),
    atomic_node_types=frozenset({"string", "interpolated_string_expression"}),
    # `def total: Int =` and Scala 3's `class A extends B:` end their header with these.
    signature_terminators=frozenset({"=", ":"}),
)

SPECS = (SCALA,)
