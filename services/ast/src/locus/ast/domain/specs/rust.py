"""Rust: a file's module is its path in the crate, named the way `use` paths read.

The crate is the source root's name (the `Cargo.toml` package name, `-` read as `_`; `crate`
when unknown): `src/lib.rs` and `src/main.rs` are the crate itself, `src/billing/mod.rs` and
`src/billing.rs` are `shop::billing`, `src/billing/tax.rs` is `shop::billing::tax`. Definitions
are qualified under it with `::` (`shop::billing::Invoice::total`, an impl's methods by the
impl's type). `use crate::…`, `self::…` and `super::…` resolve against the importing module;
other paths (`std::fmt`, another crate) stay as written. `mod tax;` depends on the child module.

Items written inside an item-level macro (`cfg_rt! { pub fn spawn() ... }`, tokio's way of
gating whole modules) are tree-sitter token trees; the parser is given the source with such a
macro's name, `!` and braces blanked out (``unwrap_item_macros``), so they are read as the
items they are, at the lines where they are written.
"""

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from locus.ast.domain.language_spec import (
    LanguageSpec,
    SourceRoot,
    blank_spans,
    clean_doc_comment,
)

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


# An item-level macro: its name alone at the head of a line, then `!` and a brace
# (`cfg_rt! {`); `macro_rules!` defines a macro and is never unwrapped.
_ITEM_MACRO = re.compile(
    rb"^[ \t]*(?!macro_rules\b)([A-Za-z_][A-Za-z0-9_]*)![ \t]*\{", re.MULTILINE
)
# What the macro's body must begin with to be read as items: an item keyword, an attribute,
# or another item-level macro (`cfg_rt! { cfg_net! { ... } }`). Comments are skipped first.
_ITEM_START = re.compile(
    rb"(?:pub|fn|impl|struct|enum|mod|use|trait|type|const|static|unsafe|async|extern|union"
    rb"|macro_rules)\b|#|[A-Za-z_][A-Za-z0-9_]*![ \t]*\{"
)
_SPACE_AND_COMMENTS = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
# What the brace matcher stops at: braces, comments, strings, raw strings, char literals (one
# character, escaped or UTF-8; a lifetime such as `'a` has no closing quote and is passed by).
_BRACE_TOKEN = re.compile(
    rb"[{}]|//[^\n]*|/\*|(?<![A-Za-z0-9_])b?r(#*)\"|b?\"(?:[^\"\\]|\\.)*\""
    rb"|b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n\x80-\xff]|[\xc0-\xf7][\x80-\xbf]{1,3})'",
    re.DOTALL,
)


def _block_comment_end(source: bytes, start: int) -> int:
    """The end of the (nested, as Rust allows) block comment opening at ``start``."""
    depth, position = 0, start
    while position < len(source):
        if source.startswith(b"/*", position):
            depth, position = depth + 1, position + 2
        elif source.startswith(b"*/", position):
            depth, position = depth - 1, position + 2
            if depth == 0:
                return position
        else:
            position += 1
    return len(source)


def _matching_brace(source: bytes, start: int) -> int | None:
    """The position of the `}` that closes the `{` at ``start``; None when it is never closed."""
    depth, position = 0, start
    while (token := _BRACE_TOKEN.search(source, position)) is not None:
        text = token.group()
        if text == b"{":
            depth += 1
        elif text == b"}":
            depth -= 1
            if depth == 0:
                return token.start()
        if text == b"/*":
            position = _block_comment_end(source, token.start())
        elif token.group(1) is not None:  # a raw string: on to its closing quote and hashes
            closing = source.find(b'"' + token.group(1), token.end())
            position = len(source) if closing < 0 else closing + 1 + len(token.group(1))
        else:
            position = token.end()
    return None


def unwrap_item_macros(source: bytes) -> bytes:
    """The source with each item-level macro's wrapper blanked (same length, same lines):
    `cfg_rt! {` and its closing `}` become spaces, so the items inside parse as items. A macro
    whose body does not begin like an item (`select! { ... }`, `quote! { ... }`) is left as
    it is."""
    spans: list[tuple[int, int]] = []
    for match in _ITEM_MACRO.finditer(source):
        skipped = _SPACE_AND_COMMENTS.match(source, match.end())  # matches, maybe empty
        body = skipped.end() if skipped else match.end()
        if not _ITEM_START.match(source, body):
            continue
        closing = _matching_brace(source, match.end() - 1)
        if closing is not None:
            spans.extend([(match.start(1), match.end()), (closing, closing + 1)])
    return blank_spans(source, spans)


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
    parse_source=unwrap_item_macros,
)

SPECS = (RUST,)
