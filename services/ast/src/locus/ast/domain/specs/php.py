"""PHP: files are modules named by their path; classes, interfaces, traits, enums and functions
are qualified by the file's `namespace` the way PHP writes them (`App\\Models\\User::save`)."""

import posixpath

from locus.ast.domain.language_spec import LanguageSpec, SourceRoot

_NAMESPACE_SEPARATOR = "\\"
_MEMBER_SEPARATOR = "::"
_CLASS_KEYWORDS = frozenset({"self", "static", "parent"})


def php_module_name(relative_path: str, root: SourceRoot) -> str:
    """`app/Http/Controllers/UserController.php` stays as it is: PHP files are included by
    path, and classes are named by their namespace, not by the file."""
    return relative_path.replace("\\", "/").strip("/")


def resolve_php_import(written: str, module_name: str, is_package: bool) -> str | None:
    """`use App\\Models\\User` -> `App\\Models\\User` (a leading `\\` changes nothing);
    `require __DIR__ . '/helpers.php'` (captured as `/helpers.php`) -> the file's path next to
    the including file, None when it climbs out of the repository."""
    if written.startswith("/"):
        path = posixpath.normpath(posixpath.dirname(module_name) + written)
        return None if path.startswith("..") else path.lstrip("/")
    name = written.lstrip(_NAMESPACE_SEPARATOR)
    return name or None


def php_definition_namespace(module_name: str, declared: str | None) -> str:
    """The declared `namespace`, without a leading `\\`; global ("") without one."""
    return (declared or "").strip(_NAMESPACE_SEPARATOR)


def php_reference(reference: str) -> str:
    """`$this->save` -> `this::save`, `new User` -> `User`, `$user->save` -> `$user::save`
    (an unknown variable: unresolved); `parent::boot`, `new static` -> "" (nothing this file
    can name)."""
    text = reference.strip()
    if text.startswith("new "):
        text = text.removeprefix("new ").strip()
    text = text.replace("?->", "->")
    if text.startswith("$this->"):
        text = "this" + _MEMBER_SEPARATOR + text.removeprefix("$this->")
    text = text.replace("->", _MEMBER_SEPARATOR)
    head = text.split(_MEMBER_SEPARATOR)[0]
    if head == "parent" or text in _CLASS_KEYWORDS:
        return ""
    return text


PHP = LanguageSpec(
    name="php",
    grammar="php",
    module_name_for_path=php_module_name,
    resolve_import=resolve_php_import,
    separator=_MEMBER_SEPARATOR,
    namespace_separator=_NAMESPACE_SEPARATOR,
    definition_namespace=php_definition_namespace,
    instance_receivers=frozenset({"this", "self", "static"}),
    same_namespace_lookup=True,
    reference_normalizer=php_reference,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=frozenset({"string", "encapsed_string", "heredoc", "nowdoc"}),
    doc_comment_prefixes=("/**",),
)

SPECS = (PHP,)
