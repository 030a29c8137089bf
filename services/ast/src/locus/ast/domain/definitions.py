"""Finds a file's class and function definitions and names them within the module."""

from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from locus.ast.domain.languages import CompiledLanguage
from locus.ast.domain.model import SymbolKind
from locus.ast.domain.source_text import SourceText, leaf_tokens, normalized_tokens_text


@dataclass(eq=False, slots=True)
class Definition:
    """A class or function definition with the facts symbols, relations and chunks need."""

    node: Node
    outer: Node
    """The node including decorators; the definition itself when it has none."""
    body: Node
    name: str
    is_class: bool
    parent: "Definition | None"
    kind: SymbolKind
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


def innermost_definition(node: Node, by_node_id: dict[int, Definition]) -> Definition | None:
    """The nearest definition strictly enclosing `node`, or None at module level."""
    ancestor = node.parent
    while ancestor is not None:
        found = by_node_id.get(ancestor.id)
        if found is not None:
            return found
        ancestor = ancestor.parent
    return None


def _header(
    node: Node, body: Node, compiled: CompiledLanguage, source: SourceText
) -> tuple[str, int]:
    spec = compiled.spec
    tokens = leaf_tokens(node, body.start_byte, spec.comment_node_types, spec.atomic_node_types)
    if not tokens:
        return "", node.start_byte
    header_end_byte = tokens[-1].end_byte
    if source.decode(tokens[-1].start_byte, tokens[-1].end_byte) in spec.signature_terminators:
        tokens.pop()
    return normalized_tokens_text(tokens, source), header_end_byte


def collect_definitions(
    root: Node, compiled: CompiledLanguage, source: SourceText, module_name: str
) -> list[Definition]:
    """All definitions in document order, each linked to its enclosing definition."""
    if compiled.definitions is None:
        return []
    separator = compiled.spec.separator
    wrappers: dict[int, Node] = {}
    found: list[tuple[Node, Node, Node, bool]] = []
    for _, captures in QueryCursor(compiled.definitions).matches(root):
        if "wrapper" in captures:
            wrappers[captures["wrapped"][0].id] = captures["wrapper"][0]
            continue
        is_class = "definition.class" in captures
        node = captures["definition.class" if is_class else "definition.function"][0]
        found.append((node, captures["name"][0], captures["body"][0], is_class))
    found.sort(key=lambda item: item[0].start_byte)

    definitions: list[Definition] = []
    by_node_id: dict[int, Definition] = {}
    taken: set[str] = set()
    for node, name_node, body, is_class in found:
        parent = innermost_definition(node, by_node_id)
        name = source.decode(name_node.start_byte, name_node.end_byte)
        if is_class:
            kind: SymbolKind = "class"
        else:
            kind = "method" if parent is not None and parent.is_class else "function"
        scope_name = f"{parent.scope_name}{separator}{name}" if parent else name
        qualified_name = f"{module_name}{separator}{scope_name}"
        signature, header_end_byte = _header(node, body, compiled, source)
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
        )
        taken.add(qualified_name)
        if parent is not None and definition.is_primary:
            parent.members.setdefault(name, definition)
        definitions.append(definition)
        by_node_id[node.id] = definition
    return definitions


def attach_docstrings(
    root: Node, compiled: CompiledLanguage, source: SourceText, definitions: list[Definition]
) -> str | None:
    """Sets each definition's docstring and returns the module's docstring."""
    if compiled.docstrings is None:
        return None
    by_node_id = {definition.node.id: definition for definition in definitions}
    module_docstring: str | None = None
    captured = QueryCursor(compiled.docstrings).captures(root).get("docstring", [])
    for literal in sorted(captured, key=lambda node: node.start_byte):
        text = compiled.spec.docstring_text(source.decode(literal.start_byte, literal.end_byte))
        owner = innermost_definition(literal, by_node_id)
        if owner is None:
            module_docstring = module_docstring if module_docstring is not None else text
        elif owner.docstring is None:
            owner.docstring = text
    return module_docstring
