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
from bisect import bisect_right
from dataclasses import dataclass

from locus.ast.domain.language_spec import (
    LanguageSpec,
    blank_spans,
    global_namespace,
    path_module_name,
    without_angle_arguments,
)
from locus.codepaths.includes import is_system_header

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
# How far into its line a leading annotation may start (indentation, a template head and the
# specifiers and annotations before it).
_CONTEXT_LIMIT = 400
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
# A function-like annotation alone on its line (`JSON_HEDLEY_NON_NULL(3)`,
# `JSON_HEDLEY_DEPRECATED_FOR(3.1.0, f)`): blanked only when a declaration follows it.
_LONE_CALL = re.compile(
    rb"^[ \t]*("
    + _MACRO.encode()
    + rb"[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))[ \t]*(?://[^\n]*)?\r?$",
    re.MULTILINE,
)
# An access specifier spelled as a macro, alone on its line (`JSON_PRIVATE_UNLESS_TESTED:`;
# a ternary's branch `MODE_A :` is written with a blank).
_ACCESS = re.compile(rb"^[ \t]*(" + _MACRO.encode() + rb":)[ \t]*\r?$", re.MULTILINE)
# A conditional directive, and what ends a statement or a block on the code line before one.
_CONDITIONAL = re.compile(rb"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
_LINE_COMMENT = re.compile(rb"//.*$")
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/")
# An out-of-line constructor or destructor after one word (`simdjson_inline
# document_stream::document_stream(`): a constructor has no return type, so the word is an
# annotation macro, whatever its case (a specifier such as `inline`, or `new`, is left alone).
_CONSTRUCTOR_HEAD = re.compile(
    rb"^[ \t]*(?:template[ \t]*<[^\n]*>[ \t]*)?([A-Za-z_]\w*)[ \t]+"
    rb"(?:[A-Za-z_]\w*(?:<[^\n(<>]*>)?::)*([A-Za-z_]\w*)(?:<[^\n(<>]*>)?::~?\2[ \t]*\(",
    re.MULTILINE,
)
# The words before an out-of-line conversion operator (`inline document::element_result<bool>::
# operator bool()`): it has no return type, so they are specifiers or annotations, and with
# them tree-sitter reads `document::element_result<bool>::operator` as a type and `bool()` as
# the function (`operator new` and `operator delete` have return types).
_CONVERSION_HEAD = re.compile(
    rb"^[ \t]*(?:template[ \t]*<[^\n]*>[ \t]*)?((?:[A-Za-z_]\w*[ \t]+)+)"
    rb"(?:[A-Za-z_]\w*(?:<[^\n(<>]*>)?::)+operator[ \t]+(?!(?:new|delete|co_await)\b)[A-Za-z_]",
    re.MULTILINE,
)
_SPECIFIERS = frozenset(
    b"inline constexpr consteval explicit static virtual friend extern template".split()
)
# Words that make `MACRO word(` a statement rather than a constructor's head.
_NOT_A_NAME = frozenset(
    b"if while for switch return sizeof do else case goto typeof decltype alignof alignas "
    b"static_assert defined new delete throw co_return co_await co_yield".split()
)
# After annotations, a macro call that closes its line (`XXH_FORCE_INLINE XXH_TARGET_AVX2
# XXH3_ACCUMULATE_TEMPLATE(avx2)`): it writes a definition the parser cannot see, and read as
# written it swallows the next one (or loses it), so the whole line is blanked.
_DEFINING_CALL = re.compile(
    rb"[ \t]+(" + _MACRO.encode() + rb"[ \t]*\([^()\n]*\))[ \t]*(?://[^\n]*)?\r?(?:\n|$)"
)
# Between `class` / `struct` / `union` and the type's name (`class FMT_API format_error`).
_CLASS_HEAD = re.compile(
    rb"\b(?:class|struct|union)[ \t]+(" + _MACRO.encode() + rb")[ \t]+(?=[A-Za-z_])"
)
_SCOPE = re.compile(r"\s*::\s*")


def resolve_include(written: str, module_name: str, is_package: bool) -> str | None:
    """`"../common/mem.h"` included by `lib/compress/zstd.c` -> `lib/common/mem.h`. An angle
    include names a file of the project only through an include directory: it keeps its path
    as written, in its brackets (`<nlohmann/json.hpp>`), for the store and impact to resolve by
    path (``locus.codepaths.includes``); the brackets also keep it from reading as a name (no
    call or type is bound to it). A header of the compiler or the system (`<stdio.h>`,
    `<vector>`) or one climbing out of the repository names no file of the project."""
    angle = written.startswith("<")
    written = written.strip("<>").strip()
    if not written:
        return None
    directory = "" if angle else posixpath.dirname(module_name)
    path = posixpath.normpath(posixpath.join(directory, written))
    if path.startswith("../") or path == ".." or path.startswith("/"):
        return None
    if angle:
        return None if is_system_header(path) else f"<{path}>"
    return path


def cpp_definition_name(written: str) -> str:
    """`formatter<T>::format` -> `formatter::format`; `A::operator bool() const` ->
    `A::operator bool`; `operator()` and `operator<<` keep their symbols; a literal operator
    reads `operator""_json` however it is spaced."""
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
        if symbol.startswith('""'):
            symbol = '""' + symbol[2:].strip()  # `operator "" _json` -> `operator""_json`
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


def _declaration_head(after: bytes, constructors: bool) -> bool:
    """Whether the text after a leading annotation reads `type name(` or `operator T(` (or,
    with ``constructors``, a C++ constructor's `name(`)."""
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
    if constructors and len(words) == 1 and words[0] not in _NOT_A_NAME:
        # A constructor or destructor: `FMT_CONSTEXPR text_style(...)`, `MACRO ~buffer()`.
        return True
    return len(words) >= 2 or words == [b"operator"]


def _lines(source: bytes) -> tuple[list[bytes], list[int]]:
    """The source's lines (without their `\\n`) and the offset each starts at."""
    lines = source.split(b"\n")
    starts, position = [], 0
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    return lines, starts


def _annotated_lone_calls(
    source: bytes, lines: list[bytes], starts: list[int], constructors: bool
) -> list[tuple[int, int]]:
    """The function-like annotations alone on their lines whose next line that is not itself
    a lone annotation reads `type name(`, or in C++ a constructor's `name(` (so in C a macro
    that is the return type, `YAML_DECLARE(int)` above `yaml_parser_initialize(`, stays).
    Only the lines below a call are read, each once: a run of thousands of macro lines (an
    X-macro table) costs one look at each, and a file without such calls none."""
    calls = list(_LONE_CALL.finditer(source))
    if not calls:
        return []
    # Line index -> whether the first line from it on that is no lone annotation reads as a
    # head (the index past the last line: no).
    known: dict[int, bool] = {len(lines): False}

    def reads_as_head(index: int) -> bool:
        passed = []
        while index not in known:
            line = lines[index]
            written = line.rstrip()
            context = _LEADING_CONTEXT.match(written + b" ")
            if (
                _LONE.fullmatch(line)
                or _LONE_CALL.fullmatch(line)
                # Only a template head or specifiers (`template <typename Context>`): the
                # declaration goes on below.
                or (written.strip() and context is not None and context.end() > len(written))
            ):
                passed.append(index)
                index += 1
                continue
            head = line[context.end() if context else 0 :]
            # `_declaration_head` reads the text after an annotation: a blank, then the head.
            known[index] = _declaration_head(b" " + head[:_HEAD_LIMIT], constructors)
        for line_index in passed:
            known[line_index] = known[index]
        return known[index]

    return [
        match.span(1)
        for match in calls
        if reads_as_head(bisect_right(starts, match.start()))  # the line after the call's
    ]


def _code_line(line: bytes) -> bytes:
    """The line's code: without its `/* ... */` and `//` comments and surrounding blanks
    ("" for none)."""
    return _LINE_COMMENT.sub(b"", _BLOCK_COMMENT.sub(b" ", line)).strip()


@dataclass
class _Conditional:
    """An open `#if` group: its directive lines, the code line before it, its first code
    line, and whether it has an `#else` / `#elif`."""

    lines: list[int]
    before: bytes
    first: bytes = b""
    alternatives: bool = False

    def splits_a_declaration(self) -> bool:
        # A template head, a list or an expression goes on (`>`, `,`, `(`, `=`, `&&`, `||`);
        # a statement, a block, a label or a macro call without `;` ends there.
        inside = self.before.endswith((b">", b",", b"(", b"=", b"&&", b"||"))
        return (
            bool(self.first)
            and not self.alternatives
            and (inside or self.first.startswith((b",", b":")))
        )


def _optional_parts_of_declarations(
    lines: list[bytes], offsets: list[int]
) -> list[tuple[int, int]]:
    """The directive lines of each `#if` group with no `#else` that sits inside a declaration
    (the code line before it goes on: ends in `>`, `,`, `(`, `=`, `&&` or `||`; or its first
    line goes on a list: `, use_thread(x)`), such as `#if defined(CPP_14)` / `constexpr` /
    `#endif` between a template head and its function. Blanked, the parser reads the
    optional part as written in place; tree-sitter cannot read a directive that splits a
    declaration. ``lines`` and ``offsets`` are the source's (``_lines``)."""
    spans: list[tuple[int, int]] = []
    groups: list[_Conditional] = []  # the open ones, innermost last
    last_code = b""
    continued = False  # the line goes on a directive (`#define A \\`)
    continuing: _Conditional | None = None  # whose directive it goes on
    commented = False  # the line is inside a block comment
    for number, line in enumerate(lines):
        directive = _CONDITIONAL.match(line)
        if continued or (directive is None and line.lstrip().startswith(b"#")):
            if continued and continuing is not None:
                continuing.lines.append(number)  # the rest of a conditional's condition
            continued = line.rstrip().endswith(b"\\")
            continuing = continuing if continued else None
            continue  # a directive's line is no code
        if directive is None:
            code = _code_line(line)
            if commented:  # inside a `/* ... */` block: code only after its end
                commented = b"*/" not in code
                code = b"" if commented else code.rsplit(b"*/", 1)[1].strip()
            if code.rfind(b"/*") > code.rfind(b"*/"):
                commented = True
                code = code[: code.rfind(b"/*")].strip()
            if code:
                for group in groups:
                    group.first = group.first or code
                last_code = code
            continue
        continued = line.rstrip().endswith(b"\\")
        word = directive.group(1)
        continuing = None
        if word.startswith(b"if"):
            groups.append(_Conditional([number], last_code))
            continuing = groups[-1]
        elif groups:
            group = groups[-1]
            group.lines.append(number)
            continuing = group
            if word != b"endif":
                group.alternatives = True
                continue
            groups.pop()
            if group.splits_a_declaration():
                spans.extend((offsets[i], offsets[i] + len(lines[i])) for i in group.lines)
    return spans


def blank_c_annotation_macros(source: bytes) -> bytes:
    """``blank_annotation_macros`` for C: no constructors, so a lone word before `(` after an
    annotation-like name is a function whose return type is spelled in capitals
    (`OSSL_PARAM OSSL_PARAM_construct_int(`), and stays."""
    return blank_annotation_macros(source, constructors=False)


def blank_annotation_macros(source: bytes, *, constructors: bool = True) -> bytes:
    """The source with its annotation macros replaced by spaces (same length, same lines):
    one leading a declaration (`FMT_CONSTEXPR text_style fg(rgb c)`, `MEM_STATIC size_t f(`),
    one after a parameter list (`) FMT_NOEXCEPT {`), one naming a class's export
    (`class FMT_API format_error`), one alone on its line (`FMT_BEGIN_NAMESPACE`), a
    function-like one alone on its line above a declaration (`JSON_HEDLEY_NON_NULL(3)`), one
    standing for an access specifier (`JSON_PRIVATE_UNLESS_TESTED:`), the word before an
    out-of-line constructor (`simdjson_inline X::X(`), the directives of an `#if` inside a
    declaration (``_optional_parts_of_declarations``). With ``constructors`` (C++), one before
    a lone name and its parameters (`FMT_CONSTEXPR text_style(`) too. A macro in an
    expression, a `#define` or a comment, and a function-like macro anywhere else
    (`JSON_ASSERT(x);`), are left as they are."""
    spans: list[tuple[int, int]] = []
    lines, starts = _lines(source)  # once, for every pass below that reads lines
    for match in _MACRO_TOKEN.finditer(source):
        line_start = starts[bisect_right(starts, match.start()) - 1]
        # A leading annotation sits in its line's first few hundred bytes: the bound keeps a
        # line of thousands of macro-like words (generated tables) linear, not quadratic.
        if match.start() - line_start > _CONTEXT_LIMIT or not _LEADING_CONTEXT.fullmatch(
            source, line_start, match.start()
        ):
            continue
        after = source[match.end() : match.end() + _HEAD_LIMIT]
        if (call := _DEFINING_CALL.match(after)) is not None:
            spans.append((match.start(), match.end() + call.end(1)))
        elif _declaration_head(after, constructors):
            spans.append(match.span())
    spans.extend(match.span(1) for match in _TRAILING.finditer(source))
    spans.extend(match.span(1) for match in _CLASS_HEAD.finditer(source))
    spans.extend(match.span(1) for match in _LONE.finditer(source))
    spans.extend(match.span(1) for match in _ACCESS.finditer(source))
    spans.extend(
        match.span(1)
        for match in _CONSTRUCTOR_HEAD.finditer(source)
        if match.group(1) not in _SPECIFIERS and match.group(1) not in _NOT_A_NAME
    )
    spans.extend(
        match.span(1)
        for match in _CONVERSION_HEAD.finditer(source)
        if not _NOT_A_NAME.intersection(match.group(1).split())
    )
    if b"#" in source:
        spans.extend(_optional_parts_of_declarations(lines, starts))
    spans.extend(_annotated_lone_calls(source, lines, starts, constructors))
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
    declarations_apart=True,
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=_ATOMIC,
    doc_comment_prefixes=_DOC_PREFIXES,
    transparent_node_types=_C_TRANSPARENT,
    dialect=_header_dialect,
    parse_source=blank_c_annotation_macros,
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
    overloads=True,
    declarations_apart=True,
    non_member_declarations=frozenset({"friend_declaration"}),
    comment_node_types=frozenset({"comment"}),
    atomic_node_types=_ATOMIC,
    doc_comment_prefixes=_DOC_PREFIXES,
    definition_name_normalizer=cpp_definition_name,
    transparent_node_types=_CPP_TRANSPARENT,
    parse_source=blank_annotation_macros,
)

SPECS = (C, CPP)
