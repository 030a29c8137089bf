"""Ruby: files are modules named by their path without `.rb` (`lib/billing/invoice`);
constants are global, so classes, modules and methods are named by their `module`/`class`
nesting alone, joined by `::` (`Billing::Invoice::total`, which Ruby's docs write
`Billing::Invoice#total`)."""

import posixpath

from locus.ast.domain.language_spec import LanguageSpec, SourceRoot, global_namespace

_SEPARATOR = "::"
_SUFFIX = ".rb"
_LOAD_PATH = "lib"
# Top-level directories of a gem or app: a file below one is named from the project root,
# where `require 'billing/invoice'` means `lib/billing/invoice`.
_PROJECT_DIRECTORIES = frozenset({"lib", "spec", "test", "bin", "exe", "app", "config"})


def ruby_module_name(relative_path: str, root: SourceRoot) -> str:
    """`lib/billing/invoice.rb` -> `lib/billing/invoice` (below the detected source root)."""
    path = root.relative(relative_path.replace("\\", "/")).strip("/")
    return path.removesuffix(_SUFFIX)


def _string_literal(written: str) -> str | None:
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "'\"":
        return written[1:-1]
    return None


def resolve_ruby_import(written: str, module_name: str, is_package: bool) -> str | None:
    """`require_relative 'tax'` (captured with its quotes) -> the file next to the importer;
    `require 'billing/invoice'` -> `lib/billing/invoice` for a file of a gem's layout (the
    load path), else the path as written. None when a relative path climbs out."""
    relative = _string_literal(written)
    if relative is not None:
        if not relative or "#{" in relative:
            return None
        path = posixpath.normpath(posixpath.join(posixpath.dirname(module_name), relative))
        return None if path.startswith("..") else path.removesuffix(_SUFFIX)
    if not written or "#{" in written:
        return None
    feature = written.removesuffix(_SUFFIX)
    if module_name.split("/", 1)[0] in _PROJECT_DIRECTORIES and "/" in module_name:
        return f"{_LOAD_PATH}/{feature}"
    return feature


def ruby_reference(reference: str) -> str:
    """`Invoice.new` -> `Invoice` (the class), `self.total` -> `self::total`,
    `Billing::Tax.rate` -> `Billing::Tax::rate`; a call on a local value (`items.each`) or a
    bare `new` or `super` -> "" (nothing this file can name)."""
    text = reference.replace("&.", ".").removeprefix(_SEPARATOR)
    parts = text.split(".")
    if len(parts) > 1 and parts[-1] == "new":
        parts.pop()
    elif parts in (["new"], ["super"]):
        return ""
    receiver = parts[0].split(_SEPARATOR)[0]
    if len(parts) > 1 and receiver != "self" and not receiver[:1].isupper():
        return ""
    return _SEPARATOR.join(parts)


RUBY = LanguageSpec(
    name="ruby",
    grammar="ruby",
    module_name_for_path=ruby_module_name,
    resolve_import=resolve_ruby_import,
    separator=_SEPARATOR,
    definition_namespace=global_namespace,
    qualified_name_separators=(_SEPARATOR,),
    instance_receivers=frozenset({"self"}),
    same_namespace_lookup=True,
    enclosing_namespace_lookup=True,
    class_members_in_scope=True,
    reference_normalizer=ruby_reference,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=frozenset({"string", "heredoc_body", "regex"}),
    signature_terminators=frozenset({";", "="}),
    doc_comment_prefixes=("#",),
    namespace_functions_are_methods=True,
)

SPECS = (RUBY,)
