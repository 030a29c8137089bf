"""Kotlin's `LanguageSpec`: classes, interfaces, enum classes, objects and functions qualified
by the declared package (`com.acme.billing.Invoice.total`, top-level `com.acme.billing.fn`);
companion object members are qualified under their class; KDoc `/** */` as docstrings."""

from locus.ast.domain.language_spec import LanguageSpec
from locus.ast.domain.specs._jvm import (
    jvm_is_package_path,
    jvm_module_name,
    jvm_namespace,
    jvm_resolve_import,
)

KOTLIN = LanguageSpec(
    name="kotlin",
    grammar="kotlin",
    module_name_for_path=jvm_module_name,
    is_package_path=jvm_is_package_path,
    resolve_import=jvm_resolve_import,
    separator=".",
    definition_namespace=jvm_namespace,
    instance_receivers=frozenset({"this"}),
    same_namespace_lookup=True,
    class_members_in_scope=True,
    comment_node_types=frozenset({"line_comment", "multiline_comment"}),
    atomic_node_types=frozenset({"string_literal"}),
    # A body-less class's header ends before its last part (`: Base(id)`, `, Payable`).
    signature_terminators=frozenset({":", ","}),
    doc_comment_prefixes=("/**",),
    # tree-sitter-kotlin keeps a comment after the package line or the last import inside it.
    doc_comment_holders=frozenset({"package_header", "import_list", "import_header"}),
)

SPECS = (KOTLIN,)
