"""The in-memory code graph of one project: symbols as nodes, resolved relations as edges, with
adjacency in both directions for fast traversal.

``build_graph`` resolves every relation's ``target_qualified_name`` against this project's
symbols, every definition of the name (a ``target_node_id`` the ast service published is kept
beside them while its node exists: on its own it depends on which files were parsed before the
referring one), following re-exports (``from .client import UploadClient`` in
``uploads/__init__.py`` makes ``uploads.UploadClient`` resolve to ``uploads.client.UploadClient``;
``export * from './button'`` in a TypeScript barrel makes ``@acme/ui.Button`` resolve to
``@acme/ui/src/button.Button``).
A C/C++ include that names no file beside its includer is resolved through the project's
directories, as a build's include directories would (``locus.codepaths.includes``); a C# name
its file's namespace does not define, through the enclosing namespaces, the file's ``using``
namespaces and the global namespace (``locus.codepaths.namespaces``).
A method that a base of its type (``inherits``, followed up to ``MAX_BASE_HOPS`` types) also
defines or declares under its name ``overrides`` the nearest such definition on each path: the
implementation of an interface method (a signature: ``SymbolKind`` "signature"), a subclass's
method replacing its base's. A call through the base's type (``repo.save()`` with ``Repo
repo``) resolves to the base's method; impact walks on to the overriders from there. A C/C++
function or member defined apart from its declaration (a header's prototype, a member declared
in its class and defined in a ``.cc`` or ``-inl.h``) overrides each declaration of its qualified
name in the project, so a change to the definition reaches the header that declares it.
Resolution happens at build time, so a target file that arrives later, or is deleted, is
picked up by the next build.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from locus.codepaths.includes import INCLUDE_LANGUAGES, IncludeDirectories
from locus.codepaths.namespaces import (
    NAMESPACE_LOOKUP_LANGUAGES,
    is_global_import,
    namespace_candidates,
)
from locus.codepaths.parameters import arity
from locus.impact.domain.model import (
    GraphDependency,
    GraphFile,
    GraphRelation,
    GraphSymbol,
    RelationKind,
)

MAX_ALIAS_HOPS = 4
MAX_BASE_HOPS = 8
OVERRIDING_KINDS = frozenset({"method", "signature"})
"""Kinds of symbols that override and are overridden (constructors are neither)."""
TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait"})
DEFINED_CALLABLE_KINDS = frozenset({"function", "method", "constructor"})
_MEMBER_SEPARATORS = ("::", ".")
STRUCTURAL_LANGUAGES = frozenset({"go"})
"""Languages whose interfaces a type implements by having their methods, undeclared."""
SIGNATURE_KIND = "signature"
DECLARATION_KINDS = frozenset({SIGNATURE_KIND, "type_alias", "constant"})
"""Symbols that hold no code (a signature, a type alias, a constant): a walk for Locate skips
them."""
IMPLICIT_RECEIVER_LANGUAGES = frozenset({"java", "csharp", "kotlin", "scala", "cpp"})
"""Languages where a bare call inside a method may name a member of its type (`helper()` for
`this.helper()`), inherited ones included."""
_RELATION_ORDER: dict[RelationKind, int] = {
    "calls": 0,
    "inherits": 1,
    "overrides": 2,
    "imports": 3,
    "references": 4,
    "contains": 5,
}


@dataclass(frozen=True, slots=True)
class Neighbour:
    relation: RelationKind
    reverse: bool
    node_id: str


@dataclass
class CodeGraph:
    symbols: dict[str, GraphSymbol]
    files: dict[str, GraphFile]
    outgoing: dict[str, list[tuple[RelationKind, str]]]
    incoming: dict[str, list[tuple[RelationKind, str]]]
    symbols_by_file: dict[str, list[str]]
    subsystem_by_file: dict[str, str]
    unresolved_relations: int = 0
    edge_count: int = field(default=0)

    def neighbours(self, node_id: str) -> Iterator[Neighbour]:
        """Edges leaving the node in either direction, callers and subclasses first."""
        for relation, target in self.incoming.get(node_id, ()):
            yield Neighbour(relation, True, target)
        for relation, target in self.outgoing.get(node_id, ()):
            yield Neighbour(relation, False, target)

    def subsystem_of(self, node_id: str) -> str:
        return self.subsystem_by_file.get(self.symbols[node_id].file_id, "")


def subsystem_for(file: GraphFile) -> str:
    """A Python file's top-level package (the first part of its module name); any other file's
    top-level directory (a Java `com.acme…`, a Go `github.com/…` or a JS path module says
    nothing about the part of the project it is in; its directory does: a Maven module, a
    workspace's `packages`, a crate). A file at the project's root has subsystem ""."""
    if file.module_name and file.language == "python":
        return file.module_name.split(".", 1)[0]
    path = file.relative_path.replace("\\", "/").strip("/")
    return path.split("/", 1)[0] if "/" in path else ""


class _Resolver:
    """Qualified name → node ids of one project, including names re-exported by imports: a
    module's named imports (``from .client import UploadClient``, ``export { Button } from
    './button'``) and its wildcard ones (``export * from './button'``, ``from .core import *``),
    followed for at most ``MAX_ALIAS_HOPS`` modules."""

    def __init__(self, symbols: dict[str, GraphSymbol], relations: Iterable[GraphRelation]):
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for symbol in symbols.values():
            self._by_name[symbol.qualified_name].append(symbol.node_id)
        self._modules = {s.qualified_name for s in symbols.values() if s.kind == "module"}
        # module → {local name → absolute target}, from the module's own import statements
        self._exports: dict[str, dict[str, str]] = defaultdict(dict)
        # module → the modules it imports every name of, in the order it imports them
        self._wildcards: dict[str, list[str]] = defaultdict(list)
        for relation in relations:
            if relation.kind != "imports" or not relation.target_qualified_name:
                continue
            module = relation.source_qualified_name
            if module not in self._modules:
                continue
            if relation.target_name.endswith("*"):
                if relation.target_qualified_name not in self._wildcards[module]:
                    self._wildcards[module].append(relation.target_qualified_name)
                continue
            local = relation.target_name.rsplit(".", 1)[-1] or relation.target_qualified_name
            self._exports[module].setdefault(local, relation.target_qualified_name)
        self._aliased: dict[str, list[str]] = {}

    def resolve(self, qualified_name: str) -> list[str]:
        found = self._by_name.get(qualified_name)
        if found:
            return found
        if qualified_name not in self._aliased:
            self._aliased[qualified_name] = self._through_exports(qualified_name)
        return self._aliased[qualified_name]

    def _through_exports(self, qualified_name: str) -> list[str]:
        """The first definition the name's re-exports reach, breadth first: a named import
        before the wildcards, wildcards in their order."""
        seen = {qualified_name}
        level = [qualified_name]
        for _ in range(MAX_ALIAS_HOPS):
            following: list[str] = []
            for name in level:
                for aliased in self._aliases(name):
                    found = self._by_name.get(aliased)
                    if found:
                        return found
                    if aliased not in seen:
                        seen.add(aliased)
                        following.append(aliased)
            level = following
        return []

    def _aliases(self, name: str) -> list[str]:
        """What ``name`` may stand for one module further: through its innermost module's named
        import of the next segment, else through that module's wildcard imports."""
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module not in self._modules:
                continue
            target = self._exports.get(module, {}).get(parts[cut])
            if target is not None:
                return [".".join([target, *parts[cut + 1 :]])]
            return [".".join([star, *parts[cut:]]) for star in self._wildcards.get(module, ())]
        return []


def build_graph(
    files: Iterable[GraphFile],
    symbols: Iterable[GraphSymbol],
    relations: Iterable[GraphRelation],
    dependencies: Iterable[GraphDependency],
) -> CodeGraph:
    file_map = {f.file_id: f for f in files}
    symbol_map: dict[str, GraphSymbol] = {}
    for symbol in symbols:
        if symbol.file_id in file_map:
            symbol_map.setdefault(symbol.node_id, symbol)
    relation_list = [r for r in relations if r.file_id in file_map]
    resolver = _Resolver(symbol_map, relation_list)
    # The namespaces each C# file imports (`using Acme.Billing;`), in order, then those every
    # file takes (`global using Serilog.Core;` anywhere in the project).
    usings: dict[str, list[str]] = defaultdict(list)
    global_usings: list[str] = []
    for relation in relation_list:
        if (
            relation.kind == "imports"
            and relation.target_name.endswith("*")
            and relation.target_qualified_name
            and file_map[relation.file_id].language in NAMESPACE_LOOKUP_LANGUAGES
        ):
            usings[relation.file_id].append(relation.target_qualified_name)
            if is_global_import(relation.target_name):
                global_usings.append(relation.target_qualified_name)

    edges: set[tuple[str, RelationKind, str]] = set()
    unresolved = 0

    def endpoints(node_id: str, qualified_name: str) -> list[str]:
        if node_id and node_id in symbol_map:
            return [node_id]
        return resolver.resolve(qualified_name) if qualified_name else []

    def targets_of(relation: GraphRelation) -> list[str]:
        """Every definition of the target's name, and the node ast published (when it still
        exists): the same edges whichever order the files were parsed in, where a published
        id alone depends on which definitions existed when the referring file was parsed."""
        name = relation.target_qualified_name
        named = resolver.resolve(name) if name else []
        if not named and name and file_map[relation.file_id].language in NAMESPACE_LOOKUP_LANGUAGES:
            # `Invoice` in `namespace Acme.App` with `using Acme.Billing;`: C#'s other guesses.
            for candidate in namespace_candidates(
                name, relation.target_name, [*usings.get(relation.file_id, ()), *global_usings]
            ):
                named = resolver.resolve(candidate)
                if named:
                    break
        published = relation.target_node_id
        if published and published in symbol_map and published not in named:
            return [published, *named]
        return named

    unresolved_members: list[tuple[list[str], GraphRelation]] = []
    for relation in relation_list:
        sources = endpoints(relation.source_node_id, relation.source_qualified_name)
        targets = targets_of(relation)
        if relation.kind == "contains":
            # What a definition contains is written in the relation's file: a global name
            # (C's functions, a C++ member declared in its class and defined in a `.cc`) also
            # names its namesakes in other files.
            targets = [t for t in targets if symbol_map[t].file_id == relation.file_id]
        if not sources or not targets:
            if sources and relation.kind == "calls" and relation.target_qualified_name:
                unresolved_members.append((sources, relation))
            else:
                unresolved += 1
            continue
        for source in sources:
            for target in targets:
                if source != target:
                    edges.add((source, relation.kind, target))

    for symbol in symbol_map.values():
        parents = endpoints(symbol.parent_node_id, symbol.parent_qualified_name)
        for parent in parents:
            if parent != symbol.node_id and symbol_map[parent].file_id == symbol.file_id:
                edges.add((parent, "contains", symbol.node_id))

    # Members by type, from each symbol's parent (a Go method or a Rust impl's may be in
    # another file than its type, so not from the contains edges).
    members: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for symbol in symbol_map.values():
        if symbol.kind in OVERRIDING_KINDS:
            for owner in endpoints(symbol.parent_node_id, symbol.parent_qualified_name):
                if owner != symbol.node_id:
                    members[owner][symbol.name].append(symbol.node_id)
    bases = _bases(edges)
    derived = {symbol_map[owner].qualified_name for owner in bases}
    # A call of a member its type does not define (`self.helper()`, `repo.save()` with the
    # method in a base class): the nearest definition up the type's bases.
    for sources, relation in unresolved_members:
        targets = _inherited_member(
            relation.target_qualified_name, resolver, symbol_map, members, bases, derived
        )
        if (
            not targets
            and file_map[relation.file_id].language in IMPLICIT_RECEIVER_LANGUAGES
            and not any(separator in relation.target_name for separator in _MEMBER_SEPARATORS)
        ):
            # `helper()` in a Java method: a member of the method's type, perhaps inherited.
            targets = [
                target
                for source in sources
                for owner in endpoints(
                    symbol_map[source].parent_node_id, symbol_map[source].parent_qualified_name
                )
                if symbol_map[owner].kind in TYPE_KINDS
                for target in (
                    members.get(owner, {}).get(relation.target_name)
                    or _nearest_in_bases(owner, relation.target_name, members, bases)
                )
            ]
        if not targets:
            unresolved += 1
            continue
        for source in sources:
            for target in targets:
                if source != target:
                    edges.add((source, "calls", target))
    edges.update(_overrides(members, bases, symbol_map))
    edges.update(_declared_apart(symbol_map, file_map))
    edges.update(_structural_implementations(members, symbol_map, file_map))

    symbols_by_file: dict[str, list[str]] = defaultdict(list)
    module_of_file: dict[str, str] = {}
    for symbol in sorted(symbol_map.values(), key=lambda s: (s.start_line, s.qualified_name)):
        symbols_by_file[symbol.file_id].append(symbol.node_id)
        if symbol.kind == "module":
            module_of_file.setdefault(symbol.file_id, symbol.node_id)

    # Built at the first C/C++ include that needs them: path → file ids (one per source).
    includes: IncludeDirectories | None = None
    files_at: dict[str, list[str]] = {}
    for dependency in dependencies:
        importer = module_of_file.get(dependency.source_file_id)
        if importer is None:
            continue
        if dependency.target_file_id in module_of_file:
            targets = [module_of_file[dependency.target_file_id]]
        else:
            targets = [
                node
                for node in resolver.resolve(dependency.target_module)
                if symbol_map[node].kind == "module"
            ]
        includer = file_map[dependency.source_file_id]
        if not targets and includer.language in INCLUDE_LANGUAGES:
            # A C/C++ include that names no file beside its includer: through the project's
            # directories, as a build's include directories would find it.
            if includes is None:
                for graph_file in file_map.values():
                    files_at.setdefault(graph_file.relative_path, []).append(graph_file.file_id)
                includes = IncludeDirectories(files_at)
            targets = [
                module_of_file[file_id]
                for path in includes.targets(dependency.target_module, includer.relative_path)
                for file_id in sorted(files_at[path])
                if file_id in module_of_file
            ]
        for target in targets:
            if target != importer:
                edges.add((importer, "imports", target))

    outgoing: dict[str, list[tuple[RelationKind, str]]] = defaultdict(list)
    incoming: dict[str, list[tuple[RelationKind, str]]] = defaultdict(list)
    for source, kind, target in sorted(edges, key=lambda e: (_RELATION_ORDER[e[1]], e[0], e[2])):
        outgoing[source].append((kind, target))
        incoming[target].append((kind, source))

    return CodeGraph(
        symbols=symbol_map,
        files=file_map,
        outgoing=dict(outgoing),
        incoming=dict(incoming),
        symbols_by_file=dict(symbols_by_file),
        subsystem_by_file={file_id: subsystem_for(f) for file_id, f in file_map.items()},
        unresolved_relations=unresolved,
        edge_count=len(edges),
    )


def _bases(edges: set[tuple[str, RelationKind, str]]) -> dict[str, list[str]]:
    """Each type's direct bases (its ``inherits`` edges), sorted."""
    bases: dict[str, list[str]] = defaultdict(list)
    for source, kind, target in edges:
        if kind == "inherits":
            bases[source].append(target)
    return {owner: sorted(found) for owner, found in bases.items()}


def _nearest_in_bases(
    owner: str,
    name: str,
    members: dict[str, dict[str, list[str]]],
    bases: dict[str, list[str]],
) -> list[str]:
    """The members called ``name`` nearest up ``owner``'s bases (not its own), breadth first;
    on each path the search stops at the first base that has one; cycles end."""
    found: list[str] = []
    seen = {owner}
    level = bases.get(owner, [])
    for _ in range(MAX_BASE_HOPS):
        following: list[str] = []
        for base in level:
            if base in seen:
                continue
            seen.add(base)
            defined = members.get(base, {}).get(name)
            if defined:
                found.extend(defined)
            else:
                following.extend(bases.get(base, ()))
        if not following:
            break
        level = following
    return found


def _inherited_member(
    qualified_name: str,
    resolver: _Resolver,
    symbols: dict[str, GraphSymbol],
    members: dict[str, dict[str, list[str]]],
    bases: dict[str, list[str]],
    derived: set[str],
) -> list[str]:
    """`pkg.Child.helper` that no symbol is named: `helper` as the nearest base of each type
    `pkg.Child` names defines it (`Base.helper`). ``derived``: the qualified names of the
    types that have bases."""
    for separator in _MEMBER_SEPARATORS:
        owner_name, found, member = qualified_name.rpartition(separator)
        if found and owner_name and member:
            break
    else:
        return []
    if owner_name not in derived:  # most unresolved calls: no type with bases is named
        return []
    targets: list[str] = []
    for owner in resolver.resolve(owner_name):
        if symbols[owner].kind in TYPE_KINDS and owner in bases:
            targets.extend(_nearest_in_bases(owner, member, members, bases))
    return targets


def _overrides(
    members: dict[str, dict[str, list[str]]],
    bases: dict[str, list[str]],
    symbols: dict[str, GraphSymbol],
) -> set[tuple[str, RelationKind, str]]:
    """(method, "overrides", base method) for each member of a type and the nearest member of
    the same name on each path up its bases, breadth first; cycles end."""
    found: set[tuple[str, RelationKind, str]] = set()
    for owner in sorted(members.keys() & bases.keys()):
        for name, methods in members[owner].items():
            targets = _nearest_in_bases(owner, name, members, bases)
            for method in methods:
                found.update(
                    (method, "overrides", target)
                    for target in _same_arity(method, targets, symbols)
                    if method != target
                )
    return found


def _declared_apart(
    symbols: dict[str, GraphSymbol], files: dict[str, GraphFile]
) -> set[tuple[str, RelationKind, str]]:
    """(definition, "overrides", declaration) for each C/C++ callable and the signatures of its
    qualified name (prototypes, in-class declarations) in other files; among overloads, those
    of the same arity. A declaration in the definition's own file is no symbol (it folds)."""
    declared: dict[str, list[str]] = defaultdict(list)
    for symbol in symbols.values():
        if symbol.kind == SIGNATURE_KIND and files[symbol.file_id].language in INCLUDE_LANGUAGES:
            declared[symbol.qualified_name].append(symbol.node_id)
    found: set[tuple[str, RelationKind, str]] = set()
    if not declared:
        return found
    for symbol in symbols.values():
        targets = declared.get(symbol.qualified_name)
        if (
            targets
            and symbol.kind in DEFINED_CALLABLE_KINDS
            and files[symbol.file_id].language in INCLUDE_LANGUAGES
        ):
            found.update(
                (symbol.node_id, "overrides", target)
                for target in _same_arity(symbol.node_id, sorted(targets), symbols)
            )
    return found


def _structural_implementations(
    members: dict[str, dict[str, list[str]]],
    symbols: dict[str, GraphSymbol],
    files: dict[str, GraphFile],
) -> set[tuple[str, RelationKind, str]]:
    """Go's interfaces are satisfied without a declaration: a type whose methods include every
    method an interface of the project declares (by name) implements it, and each of those
    methods overrides the interface's (`(*PercentRule).Apply` → `Rule.Apply`)."""
    interfaces: list[tuple[str, set[str]]] = []
    types_with: dict[str, set[str]] = defaultdict(set)  # method name → Go types defining it
    for owner, named in members.items():
        symbol = symbols[owner]
        if files[symbol.file_id].language not in STRUCTURAL_LANGUAGES:
            continue
        if symbol.kind == "interface":
            declared = {
                name
                for name, found in named.items()
                if any(symbols[member].kind == SIGNATURE_KIND for member in found)
            }
            if declared:
                interfaces.append((owner, declared))
        elif symbol.kind in TYPE_KINDS:
            for name, found in named.items():
                if any(symbols[member].kind == "method" for member in found):
                    types_with[name].add(owner)
    found_edges: set[tuple[str, RelationKind, str]] = set()
    for interface, declared in interfaces:
        implementers = set.intersection(*(types_with.get(name, set()) for name in declared))
        for implementer in implementers:
            for name in declared:
                found_edges.update(
                    (method, "overrides", target)
                    for method in members[implementer][name]
                    if symbols[method].kind == "method"
                    for target in members[interface][name]
                )
    return found_edges


def _same_arity(method: str, targets: list[str], symbols: dict[str, GraphSymbol]) -> list[str]:
    """The overloads among ``targets`` that take as many parameters as ``method`` (all of them
    when none does or the count cannot be read): an implementation of `Write(LogEvent e)`
    overrides `Write(LogEvent logEvent)`, not the interface's ten other `Write` overloads."""
    if len(targets) < 2:
        return targets
    wanted = _arity(symbols[method])
    if wanted is None:
        return targets
    same = [target for target in targets if _arity(symbols[target]) == wanted]
    return same or targets


def _arity(symbol: GraphSymbol) -> int | None:
    """How many parameters the symbol's signature declares after its name (None: no list)."""
    return arity(symbol.signature, symbol.name)
