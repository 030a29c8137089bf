"""C and C++: file paths as module names, global definition names, `#include` dependencies.

Both languages name a file's module by its repository-relative path (`lib/zstd_compress.c`,
`include/fmt/format.h`), so an `#include "x.h"` resolved against the including file's
directory names the header's module. Definitions are global: C `ZSTD_compress`, C++
`fmt::detail::buffer::push_back` (namespace blocks are containers, out-of-line definitions
`void A::B::f()` take their scope from the written name, template arguments are dropped).
A C `.h` header whose text is C++ (fmt, simdjson) is analysed as C++.
"""

import posixpath
import re

from locus.ast.domain.language_spec import (
    LanguageSpec,
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
)

SPECS = (C, CPP)
