"""Immutable results of analysing one source file: symbols, relations, dependencies, chunks.

Lines are 1-based and inclusive everywhere. Every value here is plain data so adapters can map
it to protobuf or SQL rows without touching tree-sitter.
"""

from dataclasses import dataclass
from typing import Any, Literal

SymbolKind = Literal[
    "module",
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "namespace",
    "function",
    "method",
    "constructor",
    "section",  # a document's heading and what it holds (domain/documents)
    "signature",  # a method declared without a body: interface, abstract, trait-required
    "type_alias",  # a name given to a type: `type Options = {...}`, `typealias`, `using X = Y`
    "constant",  # a module's or type's named constant: `const MaxRetries = 3`, `#define N 3`
]
CONTAINER_KINDS: frozenset[str] = frozenset(
    {"class", "interface", "struct", "enum", "trait", "namespace", "impl"}
)
"""Definition kinds whose body holds members; ``impl`` (a Rust impl block) is a container that
names an existing type and never becomes a symbol of its own."""
CALLABLE_KINDS: frozenset[str] = frozenset({"function", "method", "constructor"})
SIGNATURE_KIND = "signature"
"""A method declared without a body (a Java or C# interface's or abstract method, a TypeScript
method signature, a Go interface's method, a Rust trait's required function, a Kotlin, Scala or
PHP abstract member): a symbol, so calls through the interface resolve to it and impact reaches
its implementations, but no chunk of its own and no candidate of a ranking (nothing there to
change but its declaration)."""
TYPE_ALIAS_KIND = "type_alias"
"""A name given to a type (TypeScript `type`, Kotlin `typealias`, Scala `type`, Rust `type`, Go
`type A = B`, C++ `using A = B`): a symbol to find and outline, with no chunk of its own (its
text stays in the chunks around it, as before it was a symbol) and no candidate of a ranking."""
CONSTANT_KIND = "constant"
"""A named constant of a module or type (Go `const` and package `var`, Rust `const`/`static`,
Java `static final` fields and enum constants, Kotlin `const val` and top-level `val`, C/C++
object-like `#define`s with a value, TypeScript/JavaScript and Python module-level UPPER_CASE
names): found by name and outlined, no chunk of its own and no candidate of a ranking."""
DECLARATION_KINDS: frozenset[str] = frozenset({SIGNATURE_KIND, TYPE_ALIAS_KIND, CONSTANT_KIND})
"""Symbols that declare and hold no code of their own to change: no chunk, never ranked
(FindSymbols and impact's ``without_signatures`` leave them out)."""
LOOKUP_ONLY_KINDS: frozenset[str] = frozenset({TYPE_ALIAS_KIND, CONSTANT_KIND})
"""Symbols for people's lookups only: no name a call is resolved to goes through them (a
`new URI(...)` beside a field `URI` still names the class, `LOGGER.info` the logger's type), so
calls, and the graph, are what they were before these kinds were symbols. Both are declared with
a value after `=`, so a long one signs with its first line."""
RelationKind = Literal["contains", "calls", "imports", "inherits"]
# "fragment" is reserved for code that belongs to no symbol; the Python spec never produces it
# because top-level code always belongs to the module symbol ("module" chunks). "section" is
# (a part of) a document section's own text.
ChunkKind = Literal["function", "method", "class_header", "module", "fragment", "section"]


class _PickledByFields:
    """Pickled as its class and its field values, so unpickling is one constructor call: the
    default of a slotted frozen dataclass walks ``dataclasses.fields`` per object, and the
    parser processes send every symbol, relation and chunk of a file to the service (measured:
    half the time to load a large file's analysis, a third to dump it)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        names: tuple[str, ...] = self.__slots__  # a dataclass's slots: its fields, in order
        return type(self), tuple(getattr(self, name) for name in names)


@dataclass(frozen=True, slots=True)
class Symbol(_PickledByFields):
    """A module, class, function or method defined in the file.

    `qualified_name` is unique within one `FileAnalysis`: a redefinition in the same scope
    (property setter, `@overload`, conditional definition) folds into the first definition,
    and a later overload (`LanguageSpec.overloads`) adds its parameter list to the name.
    """

    qualified_name: str
    scope_name: str
    name: str
    kind: SymbolKind
    start_line: int
    end_line: int
    signature: str
    docstring: str | None
    parent_qualified_name: str | None


@dataclass(frozen=True, slots=True)
class Relation(_PickledByFields):
    """A directed edge from a symbol of this file to a name it contains, calls, imports or extends.

    `target_name` is the reference as written (`self.retry`, `.policy.enforce_retry_limit`);
    `target_qualified_name` is its absolute dotted name when this file alone can tell, else None.
    """

    kind: RelationKind
    source_qualified_name: str
    target_name: str
    target_qualified_name: str | None
    line: int


@dataclass(frozen=True, slots=True)
class FileDependency(_PickledByFields):
    """A module this file imports, as an absolute dotted name.

    For `from a.b import c, d` the target is `a.b` and `imported_names` is `("c", "d")`: the file
    alone cannot tell whether `a.b.c` is a module or an attribute, so a store that knows the
    repository's modules resolves `target_module + "." + name` later. Plain `import a.b` gives
    `a.b` with no names.
    """

    target_module: str
    line: int
    imported_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk(_PickledByFields):
    """A retrievable piece of the file, attached to the symbol it belongs to.

    `text` is exactly the source lines `start_line..end_line`, except for `class_header`
    chunks: those are a synthesized outline (class header, docstring, class-level statements and
    one `...`-stubbed signature per method or nested class) whose range is the class's range.
    """

    ordinal: int
    kind: ChunkKind
    symbol_qualified_name: str | None
    start_line: int
    end_line: int
    text: str
    content_sha256: str


@dataclass(frozen=True, slots=True)
class FileAnalysis:
    """Everything extracted from one file; equal inputs always give an equal analysis."""

    language: str
    module_name: str
    symbols: tuple[Symbol, ...]
    relations: tuple[Relation, ...]
    dependencies: tuple[FileDependency, ...]
    chunks: tuple[Chunk, ...]
    parse_errors: int
    omitted: str | None = None
    """Why part of the file is not in the analysis (lines nested too deep to parse); None
    when nothing was left out."""


@dataclass(frozen=True, slots=True)
class ChunkingPolicy:
    """Size limits for chunks; bodies over a limit are split into overlapping parts."""

    max_lines: int = 60
    max_chars: int = 3000
    overlap_lines: int = 5

    def __post_init__(self) -> None:
        if self.max_lines < 1 or self.max_chars < 1:
            raise ValueError("max_lines and max_chars must be at least 1")
        if not 0 <= self.overlap_lines < self.max_lines:
            raise ValueError("overlap_lines must be at least 0 and smaller than max_lines")
