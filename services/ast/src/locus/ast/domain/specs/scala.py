"""Scala's `LanguageSpec`: classes, case classes and objects (-> class), traits, enums and
`def`s (operators too: `Str.++`) qualified by the declared package
(`com.acme.billing.Invoice.total`; a companion object's members share its class's qualified
name, and the class is the symbol of that name), a package object's members under its package
(`os.pwd`), Scaladoc `/** */` as docstrings."""

from locus.ast.domain.specs._jvm import jvm_spec

SCALA = jvm_spec(
    "scala",
    "scala",
    comment_node_types=frozenset({"comment", "block_comment"}),
    atomic_node_types=frozenset({"string", "interpolated_string_expression"}),
    # `def total: Int =` and Scala 3's `class A extends B:` end their header with these.
    signature_terminators=frozenset({"=", ":"}),
    companion_node_types=frozenset({"object_definition"}),
)

SPECS = (SCALA,)
