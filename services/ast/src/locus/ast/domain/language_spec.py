"""What the generic extractor needs to know about one language besides its query files.

Query files live in `queries/<language>/` and use these capture names:

- definitions.scm: `@definition.<kind>` on a definition node, with `@name` and `@body` in the
  same match. Container kinds: `class`, `interface`, `struct`, `enum`, `trait`, `namespace` and
  `impl` (a block adding members to a type named elsewhere: Rust `impl`, never a symbol of its
  own). Callable kinds: `function`, `method`, `constructor` (a `function` inside a container is a
  method). Optional in a match: `@receiver` names the type a top-level definition belongs to
  (Go's `func (s *Server) Serve()`), `@receiver.name` the variable (`s`) by which calls
  inside (`s.helper()`) name that type's members; `@wrapper` + `@wrapped` for a node
  (decorators, `export`, templates) that extends the wrapped definition's range to its own
  start. A definition without `@body` (a prototype, an abstract method) is left out unless
  the spec keeps declarations.
- docstrings.scm: `@docstring` on a string literal; it documents the nearest enclosing
  definition, or the module when there is none. Languages whose documentation is a comment
  before the definition set `doc_comment_prefixes` instead (or as well).
- package.scm: `@package.name` on the file's package/namespace declaration (Java `package`,
  Kotlin, Scala, C# file-scoped `namespace`, PHP `namespace`); definitions are then qualified
  under it (see `definition_namespace`).
- imports.scm: `@import.statement`, `@import.module` (as written, possibly relative), optional
  `@import.name`, `@import.alias` and `@import.wildcard`; `@import.submodule` (instead of
  `@import.module`) names a child module declared in the file (Rust `mod billing;`);
  `@import.global` marks an import every file of the project takes (C# `global using`): its
  relation's written name starts with `global::` (`locus.codepaths.namespaces`).
- calls.scm: `@call.target` on the callee expression.
- inheritance.scm: `@inherits.class` on the class node, `@inherits.base` on each base expression.

A missing query file means the language has no such facts (for example no inheritance).
"""

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tree_sitter_language_pack import SupportedLanguage


@dataclass(frozen=True, slots=True)
class SourceRoot:
    """Where a file's naming starts: the directory of its source root (`src/main/java`,
    `libs/cli/src`, a directory holding `go.mod` or `Cargo.toml`) and the name that root stands
    for (the Go module path, the crate or package name; "" where the language names modules
    from directories alone). Detected by ingestion from the project's layout files."""

    directory: str = ""
    name: str = ""
    entry: str = ""
    """JS/TS: the package's entry file below the directory (what a bare import of it names)."""
    aliases: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """JS/TS: tsconfig/jsconfig path aliases, pattern → targets below the directory."""
    other_package_aliases: tuple[tuple[str, tuple[str, ...], "SourceRoot"], ...] = ()
    """JS/TS: aliases into another package of the project, pattern → targets (relative to the
    project) and that package's root, which names them."""

    def relative(self, relative_path: str) -> str:
        """`relative_path` below the root; unchanged when the file is not under it."""
        prefix = self.directory.strip("/")
        if prefix and relative_path.startswith(prefix + "/"):
            return relative_path[len(prefix) + 1 :]
        return relative_path


NO_ROOT = SourceRoot()

_DOC_DELIMITERS = re.compile(r"^\s*(/\*\*+|/\*!|/\*+|///?!?|#+|--)\s?")
_DOC_LINE_STAR = re.compile(r"^\s*\*(?!/)\s?")
_DOC_CLOSE = re.compile(r"\s*\*+/\s*$")


def clean_doc_comment(comments: Sequence[str]) -> str:
    """`/** ... */`, `/// ...`, `// ...`, `# ...` comments → their text, one line per source
    line, leading `*` of block comments and surrounding blank lines removed."""
    lines: list[str] = []
    for comment in comments:
        for index, raw in enumerate(comment.replace("\r\n", "\n").split("\n")):
            line = _DOC_CLOSE.sub("", raw)
            if index == 0:
                line = _DOC_DELIMITERS.sub("", line, count=1)
            else:
                line = _DOC_LINE_STAR.sub("", line, count=1)
                line = (
                    _DOC_DELIMITERS.sub("", line, count=1)
                    if line.lstrip().startswith(("//", "#"))
                    else line
                )
            lines.append(line.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def _namespace_is_module(module_name: str, package: str | None) -> str:
    return module_name


def _reference_as_written(reference: str) -> str:
    return reference


def _no_dialect(relative_path: str, source: bytes) -> str | None:
    return None


def _source_as_is(source: bytes) -> bytes:
    return source


def blank_spans(source: bytes, spans: Sequence[tuple[int, int]]) -> bytes:
    """``source`` with the bytes of each (start, end) span replaced by spaces, line breaks
    kept: the same length and lines, so every position still points at the written source (a
    ``parse_source`` hook's way of hiding what tree-sitter cannot read)."""
    if not spans:
        return source
    blanked = bytearray(source)
    for start, end in spans:
        for index in range(start, end):
            if blanked[index] not in b"\r\n":
                blanked[index] = 0x20
    return bytes(blanked)


def never_a_package(relative_path: str) -> bool:
    """No file is a package's own module (languages without relative imports)."""
    return False


def import_as_written(written: str, importing_module: str, is_package: bool) -> str | None:
    """Imports that name modules or types absolutely (JVM, C# `using`): as written."""
    return written or None


def declared_namespace(module_name: str, declared: str | None) -> str:
    """Definitions live in the declared package or namespace; "" (global) without one."""
    return declared or ""


def global_namespace(module_name: str, declared: str | None) -> str:
    """Definitions are global, whatever the file declares (C, C++, Ruby constants)."""
    return ""


def path_module_name(relative_path: str, root: SourceRoot) -> str:
    """The repository-relative path itself (`lib/common/mem.h`, `src/Billing/Invoice.cs`):
    for languages whose files are named by path (includes) or by nothing at all."""
    return posixpath.normpath(relative_path.replace("\\", "/")).lstrip("/")


_ANGLE_ARGUMENTS = re.compile(r"<[^<>]*>")


def without_angle_arguments(text: str) -> str:
    """Template or generic arguments removed, innermost first: `Map<K, List<V>>::get` ->
    `Map::get`."""
    previous = None
    while previous != text:
        previous, text = text, _ANGLE_ARGUMENTS.sub("", text)
    return text


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """A language's grammar, naming rules and literal handling; adding a language adds one."""

    name: str
    grammar: SupportedLanguage
    module_name_for_path: Callable[[str, SourceRoot], str]
    """(repository-relative path, its source root) -> the name of the file's module symbol."""
    resolve_import: Callable[[str, str, bool], str | None]
    """(module as written, importing module's name, is_package) -> absolute name, or None."""
    resolve_import_in_root: Callable[[str, str, bool, SourceRoot], str | None] | None = None
    """The same, for a language whose imports also read the file's source root (JS/TS:
    its package's name, entry and path aliases); used instead of `resolve_import` when set."""
    is_package_path: Callable[[str], bool] = never_a_package
    """Whether the file is a package's own module (relative imports resolve from it)."""
    import_binding: Callable[[str], str] | None = None
    """(absolute module of an import without name or alias) -> the name it binds to that
    module (Go: `billing` for `github.com/acme/shop/billing`); None = Python's rule,
    `import a.b` binds `a`."""
    docstring_text: Callable[[str], str] = str.strip
    """Turns a docstring literal's source text into the cleaned docstring."""
    separator: str = "."
    """Joins the segments of qualified names and member accesses."""
    definition_namespace: Callable[[str, str | None], str] = _namespace_is_module
    """(module name, declared package or None) -> the prefix of every definition's qualified
    name; "" for languages whose definitions are global (C, C++)."""
    namespace_separator: str | None = None
    """Joins the namespace to a definition's scope name (PHP's `\\`); None = `separator`."""
    qualified_name_separators: tuple[str, ...] = ()
    """Separators that may appear inside a definition's written name (C++ `void A::B::f()`,
    Ruby `def self.x`): the leading segments become the definition's enclosing scope."""
    instance_receivers: frozenset[str] = frozenset()
    """Names that mean "this instance/class" inside a method (`self`, `cls`, `this`)."""
    same_namespace_lookup: bool = False
    """An unresolved bare reference may name a definition of the same namespace in another
    file (Java packages, Go packages, C# namespaces): it resolves to `namespace + name`."""
    class_members_in_scope: bool = False
    """Members of enclosing classes are visible by their bare names inside methods (Java,
    Kotlin, Scala, C#): `helper()` in a method calls its class's `helper`."""
    enclosing_namespace_lookup: bool = False
    """An unresolved bare reference names a definition of an enclosing container when this
    file defines one, else one of the innermost enclosing `namespace` definition (Ruby
    constants inside `module` blocks): `Tax` in `module Billing` -> `Billing::Tax`."""
    reference_normalizer: Callable[[str], str] = _reference_as_written
    """A call target or base as written -> the form name resolution reads (PHP `$this->m` ->
    `this::m`, Ruby `Invoice.new` -> `Invoice`); the relation keeps the written form."""
    comment_node_types: frozenset[str] = frozenset({"comment"})
    atomic_node_types: frozenset[str] = frozenset({"string"})
    """Nodes whose source text is kept verbatim inside a whitespace-normalised signature."""
    signature_terminators: frozenset[str] = frozenset()
    """Tokens ending a definition header that are not part of the signature (Python's `:`)."""
    doc_comment_prefixes: tuple[str, ...] = ()
    """Comments directly above a definition (nothing but `doc_skip_node_types` between) that
    start with one of these document it (`/**`, `///`); () = no doc comments."""
    doc_skip_node_types: frozenset[str] = frozenset()
    """Siblings allowed between a doc comment and its definition (Rust attributes)."""
    doc_comment_holders: frozenset[str] = frozenset()
    """Node types whose trailing comments precede the next sibling (tree-sitter-kotlin puts
    the comment after the last import inside `import_list`/`import_header`)."""
    doc_comment_text: Callable[[Sequence[str]], str] = clean_doc_comment
    """The comments' source texts (top to bottom) -> the cleaned docstring."""
    declarations_apart: bool = False
    """Callables are declared apart from their definition (C/C++ prototypes, members declared
    in their class): a declaration in the file of a definition of its name and arity folds
    into that definition, whatever its parameter names. Elsewhere a signature beside a body of
    its name is an overload of its own (a Java interface's `verify(T)` beside a default one)."""
    companion_node_types: frozenset[str] = frozenset()
    """Node types of a type's companion (a Scala `object` beside its `class`): it shares the
    type's qualified name (its members read `Path.apply`), and the type itself is the symbol of
    that name, whichever of the two the file writes first."""
    non_member_declarations: frozenset[str] = frozenset()
    """Node types whose declarations declare no member of the type around them (C++ `friend`):
    a signature directly inside one is no symbol."""
    overloads: bool = False
    """Callables of one scope may share a name and differ in their parameters (Java, Kotlin,
    Scala, C#, C++): each overload is a symbol of its own. The first keeps the plain qualified
    name (what a call by name resolves to); each later one adds its parameter list as written
    (`XmlMapper.readValue(JsonParser p, Class<T> valueType)`). Without it, and for a
    redefinition with the same parameters (C/C++ `#if` branches), a redefinition folds into
    the first definition (Python's `@overload`, a property's setter)."""
    namespace_functions_are_methods: bool = False
    """Whether a function in a namespace container is a method (Ruby modules are mixins: their
    defs are instance methods); elsewhere (C++/C#/TS namespaces, Rust `mod`) it is a function."""
    query_sources: Mapping[str, str] = field(default_factory=dict)
    """Query files this language reads from another language's directory (TSX: TypeScript's
    definitions, JavaScript's JSX-aware calls); by default `queries/<name>/`."""
    module_doc_comment: bool = False
    """Whether the first doc comment of the file, when no definition claims it, documents the
    module (GoDoc package comments, Rust `//!`)."""
    definition_name_normalizer: Callable[[str], str] = _reference_as_written
    """A definition's written name -> the name it is qualified by (C++ `formatter<T>::format`
    -> `formatter::format`)."""
    transparent_node_types: frozenset[str] = frozenset()
    """Blocks whose children count as statements of the block around them for chunking (C
    `#ifdef` include guards, `extern "C" {}`): definitions inside still get their own chunks."""
    dialect: Callable[[str, bytes], str | None] = _no_dialect
    """(repository-relative path, source) -> the language that analyses this file instead,
    or None (a C `.h` header holding C++ is analysed as C++)."""
    parse_source: Callable[[bytes], bytes] = _source_as_is
    """The source -> the bytes tree-sitter parses: the same length and lines, with what the
    grammar cannot read blanked out (C/C++ annotation macros such as `FMT_CONSTEXPR`). Names,
    signatures, chunks and relations are still read from the source as written."""
    indentation_blocks: bool = False
    """Blocks are made by indentation (Python): lines nested past what the grammar's scanner
    can follow are left out so the outer levels still parse (see `indentation_limit`)."""

    @property
    def joiner(self) -> str:
        return self.namespace_separator or self.separator
