"""Go: a file's module is its package's import path; every file of a package shares it.

The import path is the module path of the `go.mod` above the file (the source root's name)
followed by the file's directory below that root: `billing/invoice.go` under
`github.com/acme/shop` -> `github.com/acme/shop/billing`. Definitions are qualified under it
with `.` (`github.com/acme/shop/billing.Invoice.Total`, a method by its receiver type). An
import binds its alias or the path's last element (`billing`) to the import path, so
`billing.NewInvoice()` names `github.com/acme/shop/billing.NewInvoice`; bare names resolve in
the file's own package. An external test package (`package billing_test`) is
`github.com/acme/shop/billing_test`, as `go test` builds it.
"""

import re
from pathlib import PurePosixPath

from locus.ast.domain.language_spec import LanguageSpec, SourceRoot

_FALLBACK_PACKAGE = "main"
# `github.com/x/y/v2` is package `y`; `gopkg.in/yaml.v3` is package `yaml`.
_MAJOR_VERSION = re.compile(r"^v[0-9]+$")
_GOPKG_VERSION = re.compile(r"\.v[0-9]+$")
# Builtin functions and conversions to predeclared types name nothing a project defines
# (`min`/`max` are left out: code older than Go 1.21 defines its own).
_BUILTINS = frozenset(
    {
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "any",
        "bool",
        "byte",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
    }
)


def go_module_name(relative_path: str, root: SourceRoot) -> str:
    """The import path of the file's package: `root.name` + its directory below `root`
    (`github.com/acme/shop/billing`); without a module path, the directory itself
    (`internal/billing`); a file at the top of an unnamed root belongs to `main`."""
    path = relative_path.replace("\\", "/")
    below = root.relative(path)
    rooted = not root.directory.strip("/") or below != path
    directory = "/".join(p for p in PurePosixPath(below).parent.parts if p not in ("/", "."))
    if root.name and rooted:
        return f"{root.name}/{directory}" if directory else root.name
    if directory:
        return directory
    return root.directory.strip("/") or _FALLBACK_PACKAGE


def go_namespace(module_name: str, declared: str | None) -> str:
    """Definitions live in the file's package: its import path, or for an external test
    package (`package status_test` beside `package status`, which `go test` builds as a
    package of its own that imports the other) the import path + `_test`."""
    if declared and declared.endswith("_test") and not module_name.endswith("_test"):
        return f"{module_name}_test"
    return module_name


def resolve_go_import(written: str, module_name: str, is_package: bool) -> str | None:
    """An import path is absolute as written (the string literal's content)."""
    return written.strip().strip('"`') or None


def go_package_name(import_path: str) -> str:
    """The name an import binds without an alias: the path's last element, a major-version
    suffix skipped (`github.com/x/y/v2` -> `y`, `gopkg.in/yaml.v3` -> `yaml`)."""
    parts = [part for part in import_path.split("/") if part]
    if len(parts) > 1 and _MAJOR_VERSION.match(parts[-1]):
        parts.pop()
    last = parts[-1] if parts else import_path
    return _GOPKG_VERSION.sub("", last).replace("-", "_")


def go_reference(reference: str) -> str:
    """A builtin (`len`, `append`, `int(x)`) resolves to nothing: "" is no name."""
    return "" if reference in _BUILTINS else reference


GO = LanguageSpec(
    name="go",
    grammar="go",
    module_name_for_path=go_module_name,
    definition_namespace=go_namespace,
    resolve_import=resolve_go_import,
    import_binding=go_package_name,
    separator=".",
    same_namespace_lookup=True,
    reference_normalizer=go_reference,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=frozenset(
        {"interpreted_string_literal", "raw_string_literal", "rune_literal"}
    ),
    doc_comment_prefixes=("//",),
    module_doc_comment=True,
)

SPECS = (GO,)
