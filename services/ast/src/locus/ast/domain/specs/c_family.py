"""C and C++: file paths as module names, global definition names, `#include` dependencies.

Both languages name a file's module by its repository-relative path (`lib/zstd_compress.c`,
`include/fmt/format.h`), so an `#include "x.h"` resolved against the including file's
directory names the header's module. Definitions are global: C `ZSTD_compress`, C++
`fmt::detail::buffer::push_back` (namespace blocks are containers, out-of-line definitions
`void A::B::f()` take their scope from the written name, template arguments are dropped).
A C `.h` header whose text is C++ (fmt, simdjson) is analysed as C++.

Annotation macros (`FMT_CONSTEXPR`, `ZSTDLIB_API`, `MEM_STATIC`, a trailing `FMT_NOEXCEPT`)
stand where the grammar expects a type, a declarator or a body; tree-sitter reads them as
errors and loses the definitions around them (a class's methods, a header's functions). The
parser reads the source with them blanked out (`blank_annotation_macros`); everything else is
read from the source as written.
"""

import posixpath
import re

from locus.ast.domain.language_spec import (
    LanguageSpec,
    blank_spans,
    global_namespace,
    path_module_name,
    without_angle_arguments,
)

_DOC_PREFIXES = ("/**", "/*!", "///", "//!")
# `#ifdef` include guards, `#if` blocks and `extern "C" {}` hold most of a header's
# definitions; their members are chunked as if they stood at the level around them. So are
# those of an ERROR node: macros (`FMT_BEGIN_NAMESPACE`) often leave a file's body in one.
_C_TRANSPARENT = frozenset(
    {
        "ERROR",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "linkage_specification",
        "declaration_list",
    }
)
# Anonymous `namespace {}` blocks too (named ones are definitions of their own).
_CPP_TRANSPARENT = _C_TRANSPARENT | {"namespace_definition"}
_ATOMIC = frozenset({"string_literal", "char_literal", "raw_string_literal", "system_lib_string"})

# Lines only C++ has: namespace blocks, templates, class heads, access specifiers and
# `using namespace` (C headers' `#ifdef __cplusplus` sections mention `std::` at most).
_CPP_MARKERS = re.compile(
    rb"^[ \t]*(?:namespace(?:[ \t]+[\w:]+)?[ \t]*\{|template[ \t]*<|class[ \t]+\w+[^;\n]*$"
    rb"|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b)",
    re.MULTILINE,
)
_OPERATOR = re.compile(r"\boperator\b")

# An annotation macro: upper case with at least one underscore (`FMT_API`, `JSON_HEDLEY_PURE`),
# which leaves out types such as `FILE` or `U32` and constants written without one.
_MACRO = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_MACRO_TOKEN = re.compile(rb"\b" + _MACRO.encode() + rb"\b")
# What may stand before a leading annotation on its line: indentation, a template head,
# specifiers, other annotations (never `#define`, a comment or an expression).
_LEADING_CONTEXT = re.compile(
    rb"[ \t]*(?:(?:template[ \t]*<[^\n]*>|static|inline|extern|friend|virtual|explicit|constexpr|"
    + _MACRO.encode()
    + rb")[ \t]+)*"
)
# A declaration head after it, up to its parameter list: words, `::`, `*`, `&`, `~` and template
# arguments; two words at least (a type and a name) or a conversion `operator`.
_HEAD_END = re.compile(rb"[(;{=]")
_HEAD = re.compile(rb"\s+[A-Za-z_~][\w\s:*&~]*")
_HEAD_WORD = re.compile(rb"[A-Za-z_]\w*")
_HEAD_OPERATOR = re.compile(rb"\boperator\b")
_ANGLE_BYTES = re.compile(rb"<[^<>;{}()]*>")
_HEAD_LIMIT = 240
# After a parameter list (and `const`, `&`): annotations before the body, an initializer list,
# `;`, `= default`, a trailing return type or another specifier.
_TRAILING = re.compile(
    rb"\)[ \t]*(?:const\b[ \t]*)?(?:&{1,2}[ \t]*)?((?:"
    + _MACRO.encode()
    + rb"[ \t\r\n]*)+)(?=[{;:=]|->|override\b|final\b|const\b|noexcept\b)"
)
# Alone on its line: a block's opening or closing (`FMT_BEGIN_NAMESPACE`, `JSON_TRY`) or an
# annotation of the declaration below (`FMT_CONSTEXPR_DECL`).
_LONE = re.compile(rb"^[ \t]*(" + _MACRO.encode() + rb")[ \t]*\r?$", re.MULTILINE)
# Between `class` / `struct` / `union` and the type's name (`class FMT_API format_error`).
_CLASS_HEAD = re.compile(
    rb"\b(?:class|struct|union)[ \t]+(" + _MACRO.encode() + rb")[ \t]+(?=[A-Za-z_])"
)
_SCOPE = re.compile(r"\s*::\s*")


def resolve_include(written: str, module_name: str, is_package: bool) -> str | None:
    """`"../common/mem.h"` included by `lib/compress/zstd.c` -> `lib/common/mem.h`; a system
    header `<stdio.h>` (or one climbing out of the repository) names no file of the project."""
    if written.startswith("<") or not written:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(module_name), written))
    if path.startswith("../") or path == ".." or path.startswith("/"):
        return None
    return path


def cpp_definition_name(written: str) -> str:
    """`formatter<T>::format` -> `formatter::format`; `A::operator bool() const` ->
    `A::operator bool`; `operator()` and `operator<<` keep their symbols."""
    text = " ".join(written.split())
    operator = _OPERATOR.search(text)
    head, tail = (text[: operator.start()], text[operator.start() :]) if operator else (text, "")
    head = _SCOPE.sub("::", without_angle_arguments(head)).strip()
    # `MACRO type name(` parses as `type::name` with the `::` missing: the name is the last
    # word, the words before it are no scope.
    head = head.rsplit(" ", 1)[-1]
    if tail:
        symbol = tail.removeprefix("operator").strip()
        # `operator()` keeps its parentheses; `operator bool() const` loses the parameters.
        symbol = "()" if symbol.startswith("()") else symbol.split("(", 1)[0].strip()
        tail = (
            f"operator {symbol}"
            if symbol[:1].isalnum() or symbol[:1] == "_"
            else f"operator{symbol}"
        )
    return f"{head}{tail}"


def cpp_reference(reference: str) -> str:
    """A callee or base as resolution reads it: template arguments dropped, `this->f` ->
    `this::f`, `::f` -> `f`; the standard library (`std::move`) names nothing of the project."""
    text = without_angle_arguments(reference).replace(" ", "")
    if text.startswith("this->"):
        text = "this::" + text.removeprefix("this->")
    text = text.removeprefix("::")
    if text.startswith("std::"):
        return ""
    return text


def _declaration_head(after: bytes) -> bool:
    """Whether the text after a leading annotation reads `type name(` or `operator T(`."""
    end = _HEAD_END.search(after, 0, _HEAD_LIMIT)
    if end is None or after[end.start() : end.start() + 1] != b"(":
        return False
    head = after[: end.start()]
    operator = _HEAD_OPERATOR.search(head)
    if operator is not None:
        head = head[: operator.end()]
    previous = None
    while previous != head:
        previous, head = head, _ANGLE_BYTES.sub(b"", head)
    if _HEAD.fullmatch(head) is None:
        return False
    words = _HEAD_WORD.findall(head)
    return len(words) >= 2 or words == [b"operator"]


def blank_annotation_macros(source: bytes) -> bytes:
    """The source with its annotation macros replaced by spaces (same length, same lines):
    one leading a declaration (`FMT_CONSTEXPR text_style fg(rgb c)`, `MEM_STATIC size_t f(`),
    one after a parameter list (`) FMT_NOEXCEPT {`), one naming a class's export
    (`class FMT_API format_error`), one alone on its line (`FMT_BEGIN_NAMESPACE`). A macro
    in an expression, a `#define` or a comment, and a function-like macro
    (`JSON_HEDLEY_NON_NULL(1)`), are left as they are."""
    spans: list[tuple[int, int]] = []
    for match in _MACRO_TOKEN.finditer(source):
        line_start = source.rfind(b"\n", 0, match.start()) + 1
        if _LEADING_CONTEXT.fullmatch(source, line_start, match.start()) and _declaration_head(
            source[match.end() : match.end() + _HEAD_LIMIT]
        ):
            spans.append(match.span())
    spans.extend(match.span(1) for match in _TRAILING.finditer(source))
    spans.extend(match.span(1) for match in _CLASS_HEAD.finditer(source))
    spans.extend(match.span(1) for match in _LONE.finditer(source))
    return blank_spans(source, spans)


def looks_like_cpp(source: bytes) -> bool:
    return _CPP_MARKERS.search(source) is not None


def _header_dialect(relative_path: str, source: bytes) -> str | None:
    """A `.h` header written in C++ (ingestion names every `.h` C) is analysed as C++."""
    if relative_path.endswith(".h") and looks_like_cpp(source):
        return "cpp"
    return None


C = LanguageSpec(
    name="c",
    grammar="c",
    module_name_for_path=path_module_name,  # includes name files
    resolve_import=resolve_include,
    separator="::",
    definition_namespace=global_namespace,
    same_namespace_lookup=True,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=_ATOMIC,
    doc_comment_prefixes=_DOC_PREFIXES,
    transparent_node_types=_C_TRANSPARENT,
    dialect=_header_dialect,
    parse_source=blank_annotation_macros,
)

CPP = LanguageSpec(
    name="cpp",
    grammar="cpp",
    module_name_for_path=path_module_name,  # includes name files
    resolve_import=resolve_include,
    separator="::",
    definition_namespace=global_namespace,
    qualified_name_separators=("::",),
    instance_receivers=frozenset({"this"}),
    same_namespace_lookup=True,
    enclosing_namespace_lookup=True,
    reference_normalizer=cpp_reference,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=_ATOMIC,
    doc_comment_prefixes=_DOC_PREFIXES,
    definition_name_normalizer=cpp_definition_name,
    transparent_node_types=_CPP_TRANSPARENT,
    parse_source=blank_annotation_macros,
)

SPECS = (C, CPP)
