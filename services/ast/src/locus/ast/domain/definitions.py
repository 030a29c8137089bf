"""Finds a file's definitions (containers and callables) and names them within their namespace."""

from dataclasses import dataclass, field

from tree_sitter import Node

from locus.ast.domain.language_spec import LanguageSpec
from locus.ast.domain.languages import CompiledLanguage, QueryMatches
from locus.ast.domain.model import (
    CALLABLE_KINDS,
    CONTAINER_KINDS,
    DECLARATION_KINDS,
    LOOKUP_ONLY_KINDS,
    SIGNATURE_KIND,
    SymbolKind,
)
from locus.ast.domain.source_text import SourceText, leaf_tokens, normalized_tokens_text
from locus.codepaths.parameters import arity, parameter_list


@dataclass(eq=False, slots=True)
class Definition:
    """A container (class, interface, struct, ...) or callable definition with the facts
    symbols, relations and chunks need."""

    node: Node
    outer: Node
    """The node including decorators; the definition itself when it has none."""
    body: Node
    name: str
    is_class: bool
    """A container: its body holds members (classes, interfaces, structs, namespaces, impls)."""
    parent: "Definition | None"
    kind: SymbolKind | str
    """A `SymbolKind`, or "impl" for a block adding members to a type named elsewhere."""
    scope_name: str
    qualified_name: str
    signature: str
    header_end_byte: int
    start_line: int
    end_line: int
    is_primary: bool
    """False for a redefinition whose qualified name an earlier definition already owns."""
    docstring: str | None = None
    members: dict[str, "Definition"] = field(default_factory=dict)
    parent_qualified_name: str | None = None
    """The enclosing symbol's qualified name when it is not `parent` (a Go method's receiver
    type, a C++ out-of-line `A::f`, a Rust impl's type): None = `parent`'s or the module."""
    receiver_name: str | None = None
    """The variable naming the receiver inside the method (Go's `s` in `func (s *Server)`)."""

    @property
    def has_body(self) -> bool:
        """False for a declaration (`DECLARATION_KINDS`): a signature, a type alias, a
        constant."""
        return self.kind not in DECLARATION_KINDS

    @property
    def is_symbol(self) -> bool:
        """Whether the definition becomes a symbol: primary, and not an `impl` block."""
        return self.is_primary and self.kind != "impl"


def innermost_definition(
    node: Node,
    by_node_id: dict[int, Definition],
    enclosing: dict[int, Definition | None] | None = None,
) -> Definition | None:
    """The nearest definition strictly enclosing `node`, or None at module level.

    `enclosing` (optional, one per tree) remembers the answer for every ancestor walked, so
    the many references inside one body stop at the first ancestor already seen instead of
    climbing to the root each time (`Node.parent` is not free in tree-sitter)."""
    walked: list[int] = []
    found: Definition | None = None
    ancestor = node.parent
    while ancestor is not None:
        ancestor_id = ancestor.id
        found = by_node_id.get(ancestor_id)
        if found is not None:
            break
        if enclosing is not None and ancestor_id in enclosing:
            found = enclosing[ancestor_id]
            break
        walked.append(ancestor_id)
        ancestor = ancestor.parent
    if enclosing is not None:
        for ancestor_id in walked:
            enclosing[ancestor_id] = found
    return found


def _header(
    node: Node, end_byte: int, compiled: CompiledLanguage, source: SourceText
) -> tuple[str, int]:
    """The definition's tokens before ``end_byte`` (its body's start; a signature's end) as
    one normalized line, without a trailing terminator, and where they end."""
    spec = compiled.spec
    tokens = leaf_tokens(node, end_byte, spec.comment_node_types, spec.atomic_node_types)
    if not tokens:
        return "", node.start_byte
    header_end_byte = tokens[-1].end_byte
    last = source.decode(tokens[-1].start_byte, tokens[-1].end_byte)
    if last in spec.signature_terminators or (last == ";" and end_byte == node.end_byte):
        tokens.pop()
    return normalized_tokens_text(tokens, source), header_end_byte


_DEFINITION_PREFIX = "definition."
_LONG_ALIAS = 200  # characters: a longer type alias's or constant's signature: its first line
_KINDS = CONTAINER_KINDS | CALLABLE_KINDS | DECLARATION_KINDS
_OVERLOADED_KINDS = CALLABLE_KINDS | {SIGNATURE_KIND}


@dataclass(slots=True)
class _Found:
    node: Node
    name: Node
    body: Node
    kind: str
    receiver: Node | None
    receiver_name: Node | None = None


def _matched_definitions(
    matched: QueryMatches, compiled: CompiledLanguage
) -> tuple[list[_Found], dict[int, Node]]:
    assert compiled.definitions is not None
    wrappers: dict[int, Node] = {}
    found: dict[int, _Found] = {}
    for captures in matched.matches("definitions"):
        if "wrapper" in captures:
            wrapped = captures["wrapped"][0]
            wrapper = captures["wrapper"][0]
            # Nested wrappers (an exported, decorated class): the outermost one wins.
            current = wrappers.get(wrapped.id)
            if current is None or wrapper.start_byte < current.start_byte:
                wrappers[wrapped.id] = wrapper
            continue
        kinds = [
            c.removeprefix(_DEFINITION_PREFIX) for c in captures if c.startswith(_DEFINITION_PREFIX)
        ]
        if not kinds or "name" not in captures:
            continue
        kind = kinds[0]
        if kind not in _KINDS:
            raise ValueError(f"definitions.scm of {compiled.spec.name}: unknown kind {kind!r}")
        node = captures[f"{_DEFINITION_PREFIX}{kind}"][0]
        if "body" in captures:
            body = captures["body"][0]
        elif kind in DECLARATION_KINDS:  # no body: the declaration is all there is
            body = node
        else:
            continue
        held = found.get(node.id)
        # The first pattern that matches a node decides its kind, but a declaration pattern
        # never wins over one that found a body (Kotlin's signatures cannot say "without a
        # body"; a constant's pattern rooted at the module matches before an object of methods).
        if held is not None and not (held.kind in DECLARATION_KINDS and "body" in captures):
            continue
        receiver = captures.get("receiver")
        receiver_name = captures.get("receiver.name")
        found[node.id] = _Found(
            node,
            captures["name"][0],
            body,
            kind,
            receiver[0] if receiver else None,
            receiver_name[0] if receiver_name else None,
        )
    # A wrapper of a wrapper (export of a decorated class) extends to the outermost start.
    for wrapped_id, wrapper in list(wrappers.items()):
        seen = {wrapped_id}
        while wrapper.id in wrappers and wrapper.id not in seen:
            seen.add(wrapper.id)
            wrapper = wrappers[wrapper.id]
        wrappers[wrapped_id] = wrapper
    return sorted(found.values(), key=lambda item: item.node.start_byte), wrappers


def _split_written_name(name: str, separators: tuple[str, ...]) -> tuple[list[str], str]:
    """`A::B::f` -> (["A", "B"], "f") for the language's in-name separators."""
    for separator in separators:
        if separator in name:
            *scope, last = name.split(separator)
            return [part for part in scope if part], last
    return [], name


def _receiver_type(node: Node, source: SourceText) -> str:
    """The type name in a receiver or impl target (`*Server`, `Server[T]`, `Vec<T>`, Kotlin's
    nullable `CellStyle?`)."""
    text = source.decode(node.start_byte, node.end_byte)
    for bracket in ("[", "<", "("):
        text = text.split(bracket, 1)[0]
    return text.strip().lstrip("*&").rstrip("?").strip()


def collect_definitions(
    matched: QueryMatches, compiled: CompiledLanguage, source: SourceText, namespace: str
) -> list[Definition]:
    """All definitions in document order, each linked to its enclosing definition.

    `namespace` prefixes every qualified name ("" for languages whose names are global)."""
    if compiled.definitions is None:
        return []
    spec = compiled.spec
    separator = spec.separator
    found, wrappers = _matched_definitions(matched, compiled)

    def qualify(scope_name: str) -> str:
        return f"{namespace}{spec.joiner}{scope_name}" if namespace else scope_name

    definitions: list[Definition] = []
    by_node_id: dict[int, Definition] = {}
    taken: set[str] = set()
    overloads: dict[str, set[str]] = {}  # a callable's plain qualified name: parameter lists
    bodied: dict[str, set[int | None]] = {}  # declarations_apart: a name's bodies' arities
    # Declarations last (they hold no definitions): a method with a body keeps the plain name
    # of its overloads, a C# partial method's implementation the declaration's, and a type
    # the name an alias gives in another preprocessor branch (fmt's `using utc_clock = ...`
    # beside `struct utc_clock {...}`).
    for item in sorted(found, key=lambda item: item.kind in DECLARATION_KINDS):
        node, body = item.node, item.body
        parent = innermost_definition(node, by_node_id)
        is_signature = item.kind == SIGNATURE_KIND
        if item.kind in DECLARATION_KINDS and (
            (parent is not None and parent.kind in CALLABLE_KINDS)
            or (node.parent is not None and node.parent.type in spec.non_member_declarations)
        ):
            # A local declaration in a body (C++ `std::string s(buf);`, a function's own
            # `using char_type = ...`), a friend.
            continue
        written = spec.definition_name_normalizer(
            source.decode(item.name.start_byte, item.name.end_byte)
        )
        outer_scope, name = _split_written_name(written, spec.qualified_name_separators)
        if item.kind == "impl":
            name = _receiver_type(item.name, source)
        if item.receiver is not None:
            outer_scope = [_receiver_type(item.receiver, source)]
        is_class = item.kind in CONTAINER_KINDS
        kind: SymbolKind | str = item.kind
        # A function in a type (or qualified by one) is a method; in a namespace it stays one.
        in_type = (
            parent is not None
            and parent.is_class
            and (parent.kind != "namespace" or spec.namespace_functions_are_methods)
        )
        if item.kind == "function" and (in_type or outer_scope):
            kind = "method"
        base = parent.scope_name if parent else ""
        scope_name = separator.join(part for part in (base, *outer_scope, name) if part)
        qualified_name = qualify(scope_name)
        parent_qualified_name = None
        if outer_scope:
            parent_qualified_name = qualify(separator.join(p for p in (base, *outer_scope) if p))
        header_end = node.end_byte if body is node else body.start_byte
        signature, header_end_byte = _header(node, header_end, compiled, source)
        if kind in LOOKUP_ONLY_KINDS and len(signature) > _LONG_ALIAS:
            # `type Options = {` and forty lines of members (a constant's table too): the
            # first line stands for it.
            line_end = source.data.find(b"\n", node.start_byte)
            head, _ = _header(node, line_end if line_end > 0 else header_end, compiled, source)
            signature = f"{head} …"
        # Declared and defined in one file (a C forward declaration, a C++ member defined
        # below its class): the definition of its arity is the symbol, whatever the
        # declaration's parameter names; the declaration folds into it.
        folds = False
        if spec.declarations_apart:
            arities = bodied.setdefault(qualified_name, set())  # by the plain name
            if is_signature:
                folds = arity(signature, name) in arities
            else:
                arities.add(arity(signature, name))
        if not folds and spec.overloads and kind in _OVERLOADED_KINDS:
            # A symbol of its own when its parameters differ (see LanguageSpec.overloads).
            parameters = parameter_list(signature, name)
            seen = overloads.setdefault(qualified_name, set())
            distinct = qualified_name in taken and parameters and parameters not in seen
            seen.add(parameters)
            if distinct:
                qualified_name += parameters
        outer = wrappers.get(node.id, node)
        definition = Definition(
            node=node,
            outer=outer,
            body=body,
            name=name,
            is_class=is_class,
            parent=parent,
            kind=kind,
            scope_name=scope_name,
            qualified_name=qualified_name,
            signature=signature,
            header_end_byte=header_end_byte,
            start_line=source.start_line(outer),
            end_line=source.end_line(node),
            is_primary=qualified_name not in taken,
            parent_qualified_name=parent_qualified_name,
            receiver_name=(
                source.decode(item.receiver_name.start_byte, item.receiver_name.end_byte)
                if item.receiver_name is not None
                else None
            ),
        )
        if kind != "impl":  # an impl block before its type's definition leaves it the name
            taken.add(qualified_name)
        # A constructor named after its class (Java `Foo.Foo`) is no member a bare `Foo` means.
        is_member = (
            definition.is_primary
            and not outer_scope
            and kind != "constructor"
            and kind not in LOOKUP_ONLY_KINDS
        )
        if parent is not None and is_member:
            parent.members.setdefault(name, definition)
        definitions.append(definition)
        by_node_id[node.id] = definition
    _types_keep_their_names(definitions, spec)
    definitions.sort(key=lambda definition: definition.node.start_byte)
    return definitions


def _types_keep_their_names(definitions: list[Definition], spec: LanguageSpec) -> None:
    """A type is the symbol of its qualified name whichever definition of that name the file
    writes first: a companion written above it (Scala's `object Path` over `class Path`) leaves
    the name, and its place among its parent's members, to the type; where overloads are
    named (``LanguageSpec.overloads``), a function of the type's name (Kotlin's factory
    `fun Cell(content: Any?)` above `class Cell`) takes its parameter list, as an overload."""
    types = {
        d.qualified_name: d
        for d in definitions
        if d.is_class and not d.is_primary and d.node.type not in spec.companion_node_types
    }
    if not types:
        return
    names = {d.qualified_name for d in definitions if d.is_primary}
    for first in definitions:
        kept = types.get(first.qualified_name)
        if kept is None or not first.is_primary or first.parent is not kept.parent:
            continue
        if first.node.type in spec.companion_node_types:
            first.is_primary = False
        elif spec.overloads and first.kind in CALLABLE_KINDS:
            renamed = first.qualified_name + parameter_list(first.signature, first.name)
            if renamed in names:
                continue
            first.qualified_name = renamed
            names.add(renamed)
        else:
            continue
        kept.is_primary = True
        del types[kept.qualified_name]
        parent = first.parent
        if parent is not None and parent.members.get(first.name) is first:
            parent.members[first.name] = kept


def attach_docstrings(
    matched: QueryMatches,
    compiled: CompiledLanguage,
    source: SourceText,
    definitions: list[Definition],
) -> str | None:
    """Sets each definition's docstring and returns the module's docstring."""
    if compiled.docstrings is None:
        return None
    by_node_id = {definition.node.id: definition for definition in definitions}
    module_docstring: str | None = None
    captured = matched.captures("docstrings", "docstring")
    for literal in sorted(captured, key=lambda node: node.start_byte):
        text = compiled.spec.docstring_text(source.decode(literal.start_byte, literal.end_byte))
        owner = innermost_definition(literal, by_node_id)
        if owner is None:
            module_docstring = module_docstring if module_docstring is not None else text
        elif owner.docstring is None:
            owner.docstring = text
    return module_docstring


def _is_doc_comment(node: Node, source: SourceText, compiled: CompiledLanguage) -> bool:
    spec = compiled.spec
    if node.type not in spec.comment_node_types:
        return False
    text = source.decode(node.start_byte, node.end_byte).lstrip()
    return text.startswith(spec.doc_comment_prefixes)


def _comments_above(node: Node, source: SourceText, compiled: CompiledLanguage) -> list[Node]:
    """The doc comments directly above `node`, top to bottom: contiguous lines, only
    `doc_skip_node_types` (attributes) allowed between them and the node."""
    skip = compiled.spec.doc_skip_node_types
    holders = compiled.spec.doc_comment_holders
    comments: list[Node] = []
    next_line = source.start_line(node)
    sibling = node.prev_sibling
    while sibling is not None and sibling.type in holders and sibling.child_count:
        sibling = sibling.children[-1]
    while sibling is not None:
        if sibling.type in skip:
            next_line = source.start_line(sibling)
        elif (
            _is_doc_comment(sibling, source, compiled) and source.end_line(sibling) >= next_line - 1
        ):
            comments.append(sibling)
            next_line = source.start_line(sibling)
        else:
            break
        sibling = sibling.prev_sibling
    comments.reverse()
    return comments


def _doc_anchor(definition: Definition) -> Node:
    """The node whose preceding comments document the definition: itself, or its container's
    body when it opens that body and the body has no delimiter of its own (Ruby puts the
    comments before a class's first member outside the `body_statement`)."""
    outer, parent = definition.outer, definition.parent
    if (
        outer.prev_sibling is None
        and parent is not None
        and outer.parent is not None
        and outer.parent.id == parent.body.id
    ):
        return parent.body
    return outer


def attach_doc_comments(
    root: Node, compiled: CompiledLanguage, source: SourceText, definitions: list[Definition]
) -> str | None:
    """Sets the docstring of each definition that has none from the doc comments above it and
    returns the module's doc comment (a leading comment no definition claims), if the
    language has one."""
    spec = compiled.spec
    if not spec.doc_comment_prefixes:
        return None
    claimed: set[int] = set()
    for definition in definitions:
        comments = _comments_above(_doc_anchor(definition), source, compiled)
        claimed.update(comment.id for comment in comments)
        if comments and definition.docstring is None:
            definition.docstring = (
                spec.doc_comment_text([source.decode(c.start_byte, c.end_byte) for c in comments])
                or None
            )
    if not spec.module_doc_comment:
        return None
    leading: list[Node] = []
    for child in root.children:
        if not _is_doc_comment(child, source, compiled):
            break
        leading.append(child)
    leading = [comment for comment in leading if comment.id not in claimed]
    if not leading:
        return None
    return spec.doc_comment_text([source.decode(c.start_byte, c.end_byte) for c in leading]) or None
