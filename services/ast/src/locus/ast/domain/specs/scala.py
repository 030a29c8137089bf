"""Scala's `LanguageSpec`: classes, case classes and objects (-> class), traits, enums and
`def`s qualified by the declared package (`com.acme.billing.Invoice.total`; a companion
object's members share its class's qualified name), Scaladoc `/** */` as docstrings."""

from locus.ast.domain.language_spec import LanguageSpec
from locus.ast.domain.specs._jvm import (
    jvm_is_package_path,
    jvm_module_name,
    jvm_namespace,
    jvm_resolve_import,
)

SCALA = LanguageSpec(
    name="scala",
    grammar="scala",
    module_name_for_path=jvm_module_name,
    is_package_path=jvm_is_package_path,
    resolve_import=jvm_resolve_import,
    separator=".",
    definition_namespace=jvm_namespace,
    instance_receivers=frozenset({"this"}),
    same_namespace_lookup=True,
    class_members_in_scope=True,
    comment_node_types=frozenset({"comment", "block_comment"}),
    atomic_node_types=frozenset({"string", "interpolated_string_expression"}),
    # `def total: Int =` and Scala 3's `class A extends B:` end their header with these.
    signature_terminators=frozenset({"=", ":"}),
    doc_comment_prefixes=("/**",),
)

SPECS = (SCALA,)
