"""Naming shared by the JVM languages (Java, Kotlin, Scala): a file's module symbol is its path
below the source root, extension kept (`com/acme/billing/Invoice.java`), so it never collides
with the `com.acme.billing.Invoice` class it declares; definitions are qualified by the
declared `package`, and imports are always absolute."""

import re
from typing import Any

from tree_sitter_language_pack import SupportedLanguage

from locus.ast.domain.language_spec import (
    LanguageSpec,
    SourceRoot,
    declared_namespace,
    import_as_written,
)

# Maven/Gradle layouts (`src/main/java/`, `app/src/test/kotlin/`) when no root was detected.
_CONVENTIONAL_ROOT = re.compile(r"(?:^|/)src/[^/]+/(?:java|kotlin|scala)/")


def jvm_module_name(relative_path: str, root: SourceRoot) -> str:
    """The path below the source root (or below a conventional `src/<set>/<lang>/` directory
    when none was detected), extension kept; the path itself when neither applies."""
    path = relative_path.replace("\\", "/").lstrip("/")
    below = root.relative(path)
    if root.directory and below != path:
        return below
    markers = list(_CONVENTIONAL_ROOT.finditer(path))
    return path[markers[-1].end() :] if markers else path


def jvm_spec(name: str, grammar: SupportedLanguage, **grammar_facts: Any) -> LanguageSpec:
    """A JVM language's spec: the naming and resolution rules above, shared by all three, plus
    what differs with the grammar (comment and literal node types, header terminators)."""
    return LanguageSpec(
        name=name,
        grammar=grammar,
        module_name_for_path=jvm_module_name,
        resolve_import=import_as_written,  # packages and types, absolute: `com.acme.util`
        separator=".",
        # The declared package; a file without one is in the unnamed package (bare names).
        definition_namespace=declared_namespace,
        instance_receivers=frozenset({"this"}),
        same_namespace_lookup=True,
        class_members_in_scope=True,
        overloads=True,
        doc_comment_prefixes=("/**",),
        **grammar_facts,
    )
