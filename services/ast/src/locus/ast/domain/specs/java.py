"""Java's `LanguageSpec`: classes, records, interfaces, annotation types, enums, methods and
constructors qualified by the declared package (`com.acme.billing.Invoice.total`, constructor
`com.acme.billing.Invoice.Invoice`), Javadoc `/** */` as docstrings, type and static imports."""

from locus.ast.domain.language_spec import LanguageSpec
from locus.ast.domain.specs._jvm import (
    jvm_is_package_path,
    jvm_module_name,
    jvm_namespace,
    jvm_resolve_import,
)

JAVA = LanguageSpec(
    name="java",
    grammar="java",
    module_name_for_path=jvm_module_name,
    is_package_path=jvm_is_package_path,
    resolve_import=jvm_resolve_import,
    separator=".",
    definition_namespace=jvm_namespace,
    instance_receivers=frozenset({"this"}),
    same_namespace_lookup=True,
    class_members_in_scope=True,
    comment_node_types=frozenset({"line_comment", "block_comment"}),
    atomic_node_types=frozenset({"string_literal", "character_literal"}),
    doc_comment_prefixes=("/**",),
)

SPECS = (JAVA,)
