"""Rust: a file's module is its path in the crate, named the way `use` paths read.

The crate is the source root's name (the `Cargo.toml` package name, `-` read as `_`; `crate`
when unknown): `src/lib.rs` and `src/main.rs` are the crate itself, `src/billing/mod.rs` and
`src/billing.rs` are `shop::billing`, `src/billing/tax.rs` is `shop::billing::tax`. Definitions
are qualified under it with `::` (`shop::billing::Invoice::total`, an impl's methods by the
impl's type). `use crate::…`, `self::…` and `super::…` resolve against the importing module;
other paths (`std::fmt`, another crate) stay as written. `mod tax;` depends on the child module.
"""

from collections.abc import Sequence
from pathlib import PurePosixPath

from locus.ast.domain.language_spec import LanguageSpec, SourceRoot, clean_doc_comment

_SEPARATOR = "::"
_SOURCE_DIRECTORY = "src"
_CRATE = "crate"
_CRATE_ROOTS = ("lib", "main")
_MODULE_FILE = "mod"


def crate_name(root: SourceRoot) -> str:
    """`my-crate` -> `my_crate`; `crate` when the source root names none."""
    return root.name.strip().replace("-", "_") or _CRATE


def rust_module_name(relative_path: str, root: SourceRoot) -> str:
    """`src/lib.rs` -> `shop`; `src/a/mod.rs` -> `shop::a`; `src/a/b.rs` -> `shop::a::b`.
    Files outside `src/` (`tests/api.rs`, `build.rs`) are named by their path below the root,
    under the crate as well (`shop::tests::api`)."""
    path = PurePosixPath(root.relative(relative_path.replace("\\", "/")))
    segments = [segment for segment in path.parts if segment not in ("/", ".")]
    if segments:
        segments[-1] = segments[-1].removesuffix(".rs")
    in_source = len(segments) > 1 and segments[0] == _SOURCE_DIRECTORY
    if in_source:
        segments.pop(0)
    module_file = len(segments) > 1 and segments[-1] == _MODULE_FILE
    crate_root = in_source and len(segments) == 1 and segments[0] in _CRATE_ROOTS
    if module_file or crate_root:
        segments.pop()
    return _SEPARATOR.join([crate_name(root), *segments])


def is_rust_module_root(relative_path: str) -> bool:
    """`mod.rs`, `lib.rs` and `main.rs` stand for their directory's module."""
    return PurePosixPath(relative_path.replace("\\", "/")).stem in (_MODULE_FILE, *_CRATE_ROOTS)


def resolve_rust_import(written: str, module_name: str, is_package: bool) -> str | None:
    """`crate::a::B` -> `<crate>::a::B`; `self::x` -> `<module>::x`; `super::x` -> the
    parent module's `x` (None past the crate root); other paths as written."""
    segments = [segment for segment in written.removeprefix(_SEPARATOR).split(_SEPARATOR)]
    if not segments or not all(segments):
        return None
    module = module_name.split(_SEPARATOR)
    head = segments[0]
    if head == _CRATE:
        return _SEPARATOR.join([module[0], *segments[1:]])
    if head == "self":
        return _SEPARATOR.join([*module, *segments[1:]])
    if head == "super":
        while segments and segments[0] == "super":
            if len(module) < 2:
                return None
            module.pop()
            segments.pop(0)
        return _SEPARATOR.join([*module, *segments])
    return _SEPARATOR.join(segments)


def rust_reference(reference: str) -> str:
    """`self.total` -> `self::total`: a member access reads like a path for name resolution."""
    return reference.replace(".", _SEPARATOR)


def rust_doc_comment(comments: Sequence[str]) -> str:
    """`///` and `//!` comment nodes end with their line break; read one line each."""
    return clean_doc_comment([comment.rstrip("\r\n") for comment in comments])


RUST = LanguageSpec(
    name="rust",
    grammar="rust",
    module_name_for_path=rust_module_name,
    is_package_path=is_rust_module_root,
    resolve_import=resolve_rust_import,
    separator=_SEPARATOR,
    instance_receivers=frozenset({"self", "Self"}),
    reference_normalizer=rust_reference,
    comment_node_types=frozenset({"line_comment", "block_comment"}),
    atomic_node_types=frozenset({"string_literal", "raw_string_literal", "char_literal"}),
    doc_comment_prefixes=("///", "/**", "//!", "/*!"),
    doc_skip_node_types=frozenset({"attribute_item"}),
    doc_comment_text=rust_doc_comment,
    module_doc_comment=True,
)

SPECS = (RUST,)
