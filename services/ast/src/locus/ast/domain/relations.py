"""Relations (contains, imports, inherits, calls) and module dependencies of one file.

Names are resolved only from what the file itself shows: its own definitions (lexically, the
way Python looks names up: enclosing functions, then the module; class bodies are visible only
to their own statements), `self`/`cls` members of the enclosing class, and imported names.
Imports anywhere in the file bind for the whole file. In languages with a `locals` query, a
variable whose type is written (a parameter `cc *ClientConn`, a local `XmlFactory f = ...`, a
field, `s := &Server{}`) makes a call on it a method of that type (`cc.Invoke` ->
`ClientConn.Invoke`, resolved as the type's name would be); the innermost declaration wins.
"""

import functools
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from locus.ast.domain.definitions import Definition, innermost_definition
from locus.ast.domain.language_spec import NO_ROOT, SourceRoot
from locus.ast.domain.languages import CompiledLanguage, QueryMatches
from locus.ast.domain.model import LOOKUP_ONLY_KINDS, FileDependency, Relation
from locus.ast.domain.source_text import SourceText
from locus.codepaths.namespaces import GLOBAL_IMPORT_PREFIX

# Callee expressions can be arbitrary (a lambda, a subscripted dict literal); keep names bounded.
_MAX_TARGET_NAME_CHARS = 200
_WHITESPACE = re.compile(r"\s+")


@dataclass(slots=True)
class _Imports:
    bindings: dict[str, str] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    dependencies: dict[str, tuple[int, list[str]]] = field(default_factory=dict)


# A type as a declaration writes it, reduced to the name its methods are defined under:
# `*ClientConn` -> `ClientConn`, `pkg.Conn` stays, `List<Foo>` -> `List`, `Cache[K, V]` -> `Cache`.
# Arrays, slices, maps, channels and function types have no methods of a project's type.
_TYPE_NAME = re.compile(r"[*&]*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:<.*>|\[[^\]]+\])?")
_NO_TYPE = frozenset({"var", "val", "auto", "let", "const", "dynamic"})


def _declared_type(written: str) -> str | None:
    found = _TYPE_NAME.fullmatch(written.strip())
    if found is None or found.group(1) in _NO_TYPE:
        return None
    return found.group(1)


def _typed_variables(
    matched: QueryMatches, source: SourceText, by_node_id: dict[int, Definition]
) -> dict[int, dict[str, str]]:
    """Per enclosing definition (its node id; 0 = the module): each variable declared there
    with a written type -> that type's name (the first declaration of a name in a scope)."""
    typed: dict[int, dict[str, str]] = {}
    enclosing: dict[int, Definition | None] = {}
    for captures in matched.matches("locals"):
        names, types = captures.get("local.name"), captures.get("local.type")
        if not names or not types:
            continue
        type_name = _declared_type(source.decode(types[0].start_byte, types[0].end_byte))
        if type_name is None:
            continue
        owner = innermost_definition(names[0], by_node_id, enclosing)
        while owner is not None and not owner.has_body:
            # A typed constant (`static final Map<K, V> DEFAULTS`) is its type's or module's
            # variable, and so is what its initializer declares.
            owner = owner.parent
        scope = typed.setdefault(owner.node.id if owner is not None else 0, {})
        for name in names:
            scope.setdefault(source.decode(name.start_byte, name.end_byte), type_name)
    return typed


class _NameResolver:
    def __init__(
        self,
        compiled: CompiledLanguage,
        definitions: list[Definition],
        bindings: dict[str, str],
        namespace: str,
        typed: dict[int, dict[str, str]] | None = None,
    ) -> None:
        self._spec = compiled.spec
        self._bindings = bindings
        self._namespace = namespace
        self._typed = typed or {}
        # Type aliases and constants are for lookups only (LOOKUP_ONLY_KINDS): no call resolves
        # through them.
        resolvable = [d for d in definitions if d.kind not in LOOKUP_ONLY_KINDS]
        self._qualified_names = {definition.qualified_name for definition in resolvable}
        self._module_members: dict[str, Definition] = {}
        for definition in resolvable:
            if (
                definition.parent is None
                and definition.is_primary
                and not definition.parent_qualified_name
            ):
                self._module_members.setdefault(definition.name, definition)

    def resolve(
        self, reference: str, lexical: Definition | None, *, typed: bool = True
    ) -> str | None:
        separator = self._spec.separator
        if typed and self._typed:
            # `cc.Invoke()` with `cc *ClientConn`: the type's member, named as the type is
            # (before the normalizer, which may drop a call on a variable as unresolvable).
            # The member need not be defined in this file (a Go method in another file of the
            # package, an inherited one): the store resolves the name or keeps it unresolved.
            variable, _, member = reference.partition(separator)
            if member and (type_name := self._type_of(variable.strip(), lexical)) is not None:
                written = separator.join(type_name.split("."))
                holder = self.resolve(written, lexical, typed=False)
                return f"{holder}{separator}{member}" if holder else None
        reference = self._spec.reference_normalizer(reference)
        head, *rest = reference.split(separator)
        joiner = self._spec.namespace_separator
        if joiner and joiner in head:
            return self._namespaced(head, rest, joiner)
        if not all(segment.isidentifier() for segment in (head, *rest)):
            return None
        receiver = lexical.receiver_name if lexical is not None else None
        if rest and receiver is not None and head == receiver and lexical is not None:
            # `s.helper()` in `func (s *Server) ...`: a member of the receiver's type, which
            # another file of the package may define.
            return separator.join([lexical.parent_qualified_name or lexical.qualified_name, *rest])
        if head in self._spec.instance_receivers and rest:
            owner = lexical
            while owner is not None and not owner.is_class:
                if owner.parent_qualified_name:  # defined outside its type (`Foo.prototype.m`)
                    return self._member(owner.parent_qualified_name, rest)
                owner = owner.parent
            return self._member(owner.qualified_name, rest) if owner else None
        local = self._lookup(head, lexical)
        if local is not None:
            if local.kind == "namespace" and rest:  # open: other files add members to it
                return separator.join([local.qualified_name, *rest])
            return self._existing(local.qualified_name, rest)
        bound = self._bindings.get(head)
        if bound is not None:
            return separator.join([bound, *rest])
        if self._spec.enclosing_namespace_lookup:
            enclosing = self._enclosing(head, rest, lexical)
            # With both lookups (C++, C#) a name outside any enclosing namespace falls back
            # to the file's namespace below.
            if enclosing is not None or not self._spec.same_namespace_lookup:
                return enclosing
        if self._spec.same_namespace_lookup:
            # Another file of the same package/namespace may define it; the store keeps the
            # relation unresolved when no symbol has this name.
            return (
                f"{self._namespace}{self._spec.joiner}{reference}" if self._namespace else reference
            )
        return None

    def _type_of(self, name: str, lexical: Definition | None) -> str | None:
        """The written type of variable ``name`` as seen from ``lexical``: declared in it or
        an enclosing definition (a field of the class), else at module level."""
        scope = lexical
        while scope is not None:
            found = self._typed.get(scope.node.id, {}).get(name)
            if found is not None:
                return found
            scope = scope.parent
        return self._typed.get(0, {}).get(name)

    def _namespaced(self, head: str, rest: list[str], joiner: str) -> str | None:
        """A name with namespace segments (PHP): `\\A\\B` is absolute; `B\\C` starts
        with an imported name or else continues the file's namespace."""
        parts = head.removeprefix(joiner).split(joiner)
        if not all(segment.isidentifier() for segment in (*parts, *rest)):
            return None
        if not head.startswith(joiner):
            bound = self._bindings.get(parts[0])
            if bound is not None:
                parts = [bound, *parts[1:]]
            elif self._namespace:
                parts = [self._namespace, *parts]
        return self._spec.separator.join([joiner.join(parts), *rest])

    def _enclosing(self, head: str, rest: list[str], lexical: Definition | None) -> str | None:
        """Ruby-style constant lookup: the innermost enclosing container of this file that
        defines `head`, else the innermost enclosing namespace (another file may define it)."""
        separator = self._spec.separator
        namespace: Definition | None = None
        scope = lexical
        while scope is not None:
            if scope.is_class:
                candidate = f"{scope.qualified_name}{separator}{head}"
                if candidate in self._qualified_names:
                    return separator.join([candidate, *rest])
                if namespace is None and scope.kind == "namespace":
                    namespace = scope
            scope = scope.parent
        if namespace is None:
            return None
        return separator.join([namespace.qualified_name, head, *rest])

    def _member(self, owner: str, rest: list[str]) -> str | None:
        """`self.helper` in a method of `owner`: the member this file defines, else (one name,
        a call the type may inherit) `owner.helper` for the graph to look up in its bases."""
        found = self._existing(owner, rest)
        if found is None and len(rest) == 1:
            return self._spec.separator.join([owner, rest[0]])
        return found

    def _existing(self, qualified_name: str, rest: list[str]) -> str | None:
        candidate = self._spec.separator.join([qualified_name, *rest])
        return candidate if candidate in self._qualified_names else None

    def _lookup(self, name: str, lexical: Definition | None) -> Definition | None:
        scope = lexical
        innermost = True
        while scope is not None:
            visible = innermost or not scope.is_class or self._spec.class_members_in_scope
            if visible and name in scope.members:
                return scope.members[name]
            innermost = False
            scope = scope.parent
        return self._module_members.get(name)


def _reference_text(
    node: Node, source: SourceText, separator: str, end_byte: int | None = None
) -> str:
    end = node.end_byte if end_byte is None else end_byte
    text = source.decode(node.start_byte, end)
    if _WHITESPACE.search(text) is None:  # most references: nothing to normalise
        return text[:_MAX_TARGET_NAME_CHARS]
    text = _WHITESPACE.sub(" ", text).strip()
    text = _around_separator(separator).sub(separator.replace("\\", "\\\\"), text)
    return text[:_MAX_TARGET_NAME_CHARS]


@functools.lru_cache(maxsize=16)
def _around_separator(separator: str) -> re.Pattern[str]:
    return re.compile(rf"\s*{re.escape(separator)}\s*")


def _joined(module: str, name: str, separator: str) -> str:
    return f"{module}{name}" if module.endswith(separator) else f"{module}{separator}{name}"


def _captured_text(
    captures: dict[str, list[Node]], capture_name: str, source: SourceText
) -> str | None:
    """The source from the first to the last node captured under `capture_name` (several
    when a path has no node of its own: Scala `import a.b.C`), all whitespace removed."""
    nodes = captures.get(capture_name)
    if not nodes:
        return None
    return "".join(source.decode(nodes[0].start_byte, nodes[-1].end_byte).split())


def _collect_imports(
    matched: QueryMatches,
    compiled: CompiledLanguage,
    source: SourceText,
    module_name: str,
    is_package: bool,
    root: SourceRoot = NO_ROOT,
) -> _Imports:
    imports = _Imports()
    if compiled.imports is None:
        return imports
    spec = compiled.spec
    in_root = spec.resolve_import_in_root

    def resolve_import(written: str) -> str | None:
        if in_root is not None:
            return in_root(written, module_name, is_package, root)
        return spec.resolve_import(written, module_name, is_package)

    separator = spec.separator
    joiner = spec.joiner
    matches = list(matched.matches("imports"))
    matches.sort(
        key=lambda captures: min(node.start_byte for nodes in captures.values() for node in nodes)
    )
    # A statement that an `@import.global` pattern matched is read from that match only.
    global_statements = {
        captures["import.statement"][0].id for captures in matches if "import.global" in captures
    }
    seen_targets: set[str] = set()
    for captures in matches:
        if (
            "import.global" not in captures
            and captures["import.statement"][0].id in global_statements
        ):
            continue
        written_module = _captured_text(captures, "import.module", source)
        submodule = _captured_text(captures, "import.submodule", source)
        if submodule is not None:
            # A child module declared here (Rust `mod billing;`), named below this module.
            written_module = _joined(module_name, submodule, joiner)
        if written_module is None:
            continue
        name = _captured_text(captures, "import.name", source)
        alias = _captured_text(captures, "import.alias", source)
        line = source.start_line(captures["import.statement"][0])
        module = resolve_import(written_module)
        if "import.wildcard" in captures:
            target_name = _joined(written_module, "*", joiner)
            target_qualified_name = module
            if "import.global" in captures:
                target_name = GLOBAL_IMPORT_PREFIX + target_name
        elif name is not None:
            target_name = _joined(written_module, name, joiner)
            target_qualified_name = _joined(module, name, joiner) if module else None
            if target_qualified_name is not None:
                imports.bindings[alias or name.split(separator)[0]] = target_qualified_name
        else:
            # A plain `import a.b` binds `a`; `import a.b as x` binds `x` to `a.b`.
            target_name = written_module
            target_qualified_name = module
            if module is not None and not alias and spec.import_binding is not None:
                imports.bindings[spec.import_binding(module)] = module
            elif module is not None:
                head = module.split(separator)[0]
                imports.bindings[alias or head] = module if alias else head
        if target_name not in seen_targets:
            seen_targets.add(target_name)
            imports.relations.append(
                Relation("imports", module_name, target_name, target_qualified_name, line)
            )
        if module is not None:
            _, names = imports.dependencies.setdefault(module, (line, []))
            if name is not None and name not in names:
                names.append(name)
    return imports


def _contains(definitions: list[Definition], module_name: str) -> list[Relation]:
    return [
        Relation(
            "contains",
            definition.parent_qualified_name
            or (definition.parent.qualified_name if definition.parent else module_name),
            definition.name,
            definition.qualified_name,
            definition.start_line,
        )
        for definition in definitions
        if definition.is_symbol
    ]


def _inherits(
    matched: QueryMatches,
    compiled: CompiledLanguage,
    source: SourceText,
    by_node_id: dict[int, Definition],
    resolver: _NameResolver,
) -> list[Relation]:
    if compiled.inheritance is None:
        return []
    bases: list[tuple[Definition, Node]] = []
    for captures in matched.matches("inheritance"):
        subclass = by_node_id.get(captures["inherits.class"][0].id)
        if subclass is not None:
            bases.extend((subclass, base) for base in captures["inherits.base"])
    bases.sort(key=lambda item: item[1].start_byte)
    relations: list[Relation] = []
    seen: set[tuple[str, str]] = set()
    for subclass, base in bases:
        target_name = _reference_text(base, source, compiled.spec.separator)
        if (subclass.qualified_name, target_name) in seen:
            continue
        seen.add((subclass.qualified_name, target_name))
        target = resolver.resolve(target_name, subclass.parent)
        relations.append(
            Relation(
                "inherits", subclass.qualified_name, target_name, target, source.start_line(base)
            )
        )
    return relations


# A string or character literal's opening: a call on one names no symbol of the project.
_LITERAL_OPENINGS = ('"', "'", "`")


def _calls(
    matched: QueryMatches,
    compiled: CompiledLanguage,
    source: SourceText,
    module_name: str,
    by_node_id: dict[int, Definition],
    resolver: _NameResolver,
) -> list[Relation]:
    if compiled.calls is None:
        return []
    # `@call.last` (optional): the callee ends with that node (PHP `$this->save`, Ruby
    # `Invoice.new`), where no single node spans receiver and name without the arguments.
    targets: dict[int, Node] = {}
    ends: dict[int, int] = {}
    for captures in matched.matches("calls"):
        last = captures.get("call.last")
        for node in captures.get("call.target", []):
            targets.setdefault(node.id, node)
            ends[node.id] = last[0].end_byte if last else node.end_byte
    relations: list[Relation] = []
    seen: set[tuple[str, str]] = set()
    enclosing: dict[int, Definition | None] = {}
    for target in sorted(targets.values(), key=lambda node: node.start_byte):
        lexical = innermost_definition(target, by_node_id, enclosing)
        caller = lexical
        # A class calls nothing itself, nor does a constant or type alias (`LOGGER =
        # getLogger(...)`, a C++ alias's `decltype(f())`): the call is its module's or
        # enclosing callable's, as before they were symbols.
        while caller is not None and (caller.is_class or caller.kind in LOOKUP_ONLY_KINDS):
            caller = caller.parent
        source_name = caller.qualified_name if caller else module_name
        target_name = _reference_text(target, source, compiled.spec.separator, ends.get(target.id))
        if target_name.startswith(_LITERAL_OPENINGS):
            continue  # a method of a literal (`"x".repeat(3)`, a raw string's `.trimMargin()`)
        if (source_name, target_name) in seen:
            continue
        seen.add((source_name, target_name))
        relations.append(
            Relation(
                "calls",
                source_name,
                target_name,
                resolver.resolve(target_name, lexical),
                source.start_line(target),
            )
        )
    return relations


def extract_relations(
    matched: QueryMatches,
    compiled: CompiledLanguage,
    source: SourceText,
    module_name: str,
    namespace: str,
    is_package: bool,
    definitions: list[Definition],
    root: SourceRoot = NO_ROOT,
) -> tuple[list[Relation], list[FileDependency]]:
    """Relations in the order contains, imports, inherits, calls (each in document order) and
    the file's dependencies in order of first import. `namespace` prefixes the file's
    definitions ("" when they are global); `root` is the file's source root (imports of some
    languages read it)."""
    imports = _collect_imports(matched, compiled, source, module_name, is_package, root)
    by_node_id = {definition.node.id: definition for definition in definitions}
    typed = _typed_variables(matched, source, by_node_id) if compiled.locals else {}
    resolver = _NameResolver(compiled, definitions, imports.bindings, namespace, typed)
    relations = [
        *_contains(definitions, module_name),
        *imports.relations,
        *_inherits(matched, compiled, source, by_node_id, resolver),
        *_calls(matched, compiled, source, module_name, by_node_id, resolver),
    ]
    dependencies = [
        FileDependency(module, line, tuple(names))
        for module, (line, names) in imports.dependencies.items()
    ]
    return relations, dependencies
