"""`extract`: one source file in, its symbols, relations, dependencies and chunks out.

The extractor is language-generic: everything language-specific comes from the language's
`LanguageSpec` and its query files.
"""

from typing import cast

from tree_sitter import Node, Parser, Point, QueryCursor, Range

from locus.ast.domain.chunk_layout import layout_chunks
from locus.ast.domain.chunking import number_chunks
from locus.ast.domain.definitions import (
    attach_doc_comments,
    attach_docstrings,
    collect_definitions,
)
from locus.ast.domain.documents import document_format, extract_document
from locus.ast.domain.errors import UndecodableSource
from locus.ast.domain.indentation_limit import shallow_lines
from locus.ast.domain.language_spec import NO_ROOT, SourceRoot
from locus.ast.domain.languages import (
    CompiledLanguage,
    QueryMatches,
    compiled_language,
    has_spec,
)
from locus.ast.domain.model import (
    DECLARATION_KINDS,
    ChunkingPolicy,
    FileAnalysis,
    Symbol,
    SymbolKind,
)
from locus.ast.domain.relations import extract_relations
from locus.ast.domain.source_text import SourceText

DEFAULT_CHUNKING_POLICY = ChunkingPolicy()


def count_parse_errors(root: Node) -> int:
    """ERROR and MISSING nodes, visiting only subtrees that contain one."""
    if not root.has_error:
        return 0
    count = 0
    pending = [root]
    while pending:
        node = pending.pop()
        if node.is_error or node.is_missing:
            count += 1
        pending.extend(child for child in node.children if child.has_error or child.is_missing)
    return count


def _last_segment(module_name: str, separator: str) -> str:
    """`pkg.sub.mod` -> `mod`, `github.com/acme/x/foo` -> `foo`, `crate::a::b` -> `b`."""
    if "/" in module_name:
        return module_name.rstrip("/").rpartition("/")[2]
    return module_name.rpartition(separator)[2]


def declared_package(matched: QueryMatches, source: SourceText) -> str | None:
    """The file's package/namespace declaration, whitespace removed; None when it has none."""
    for node in matched.captures("package", "package.name"):
        return "".join(source.decode(node.start_byte, node.end_byte).split())
    return None


def _definition_count(compiled: CompiledLanguage, root: Node) -> int:
    if compiled.definitions is None:
        return 0
    # Definitions with a body: signatures (prototypes) do not decide which tree is kept.
    captures = QueryCursor(compiled.definitions).captures(root)
    declarations = (f"definition.{kind}" for kind in DECLARATION_KINDS)
    return len(captures.get("name", [])) - sum(len(captures.get(d, [])) for d in declarations)


def parse_tree(parser: Parser, compiled: CompiledLanguage, source: bytes) -> tuple[bytes, Node]:
    """The bytes parsed and their tree: the source as the spec's ``parse_source`` gives it to
    the parser (C/C++ annotation macros blanked out). Error recovery can still go either way:
    when that tree has errors and recovers fewer definitions than the source's own, the
    source's own tree is kept."""
    parsed = compiled.spec.parse_source(source)
    tree_root = parser.parse(parsed).root_node
    if parsed == source or not tree_root.has_error:
        return parsed, tree_root
    own_root = parser.parse(source).root_node
    if _definition_count(compiled, own_root) > _definition_count(compiled, tree_root):
        return source, own_root
    return parsed, tree_root


def extracts(relative_path: str, language: str) -> bool:
    """Whether ``extract`` reads the file: a language with a spec, or a document. Every other
    file is cut into text windows (``locus.ast.plain_text``). The ast service and the offline
    replays (``bench/baselines.py``) both ask this, so they cannot drift apart."""
    return has_spec(language) or document_format(relative_path, language) is not None


def extract(
    relative_path: str,
    source: bytes,
    language: str,
    chunk_settings: ChunkingPolicy = DEFAULT_CHUNKING_POLICY,
    root: SourceRoot = NO_ROOT,
) -> FileAnalysis:
    """Analyse one file. Raises `UnsupportedLanguage` and `UndecodableSource` (not UTF-8).

    `root` is the source root the file belongs to (module names are taken from it). A file
    with syntax errors still yields whatever tree-sitter recovered; `parse_errors` says how
    much it had to recover from. Python nested deeper than the parser can follow keeps its
    outer levels; `omitted` says which lines were left out. Documents (Markdown,
    reStructuredText, AsciiDoc, HTML) are read into sections instead (`domain.documents`).
    """
    if (document := document_format(relative_path, language)) is not None:
        try:
            document_text = source.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as error:
            raise UndecodableSource(relative_path, str(error)) from error
        return extract_document(relative_path, document_text, document, chunk_settings)
    compiled = compiled_language(language)
    dialect = compiled.spec.dialect(relative_path, source)
    if dialect is not None:
        compiled = compiled_language(dialect)
    spec = compiled.spec
    parser = Parser(compiled.grammar)
    parsed, tree_root = parse_tree(parser, compiled, source)
    omitted: str | None = None
    if spec.indentation_blocks and tree_root.has_error:
        shallow = shallow_lines(source)
        if shallow is not None:
            parser.included_ranges = [
                Range(
                    Point(span.start_row, 0),
                    Point(span.end_row, span.end_column),
                    span.start_byte,
                    span.end_byte,
                )
                for span in shallow.spans
            ]
            tree_root = parser.parse(parsed).root_node
            omitted = shallow.note
    text = SourceText(relative_path, source)
    matched = QueryMatches(compiled, tree_root)
    module_name = spec.module_name_for_path(relative_path, root)
    namespace = spec.definition_namespace(module_name, declared_package(matched, text))

    definitions = collect_definitions(matched, compiled, text, namespace)
    module_docstring = attach_docstrings(matched, compiled, text, definitions)
    module_comment = attach_doc_comments(tree_root, compiled, text, definitions)
    if module_docstring is None:
        module_docstring = module_comment
    module_symbol = Symbol(
        qualified_name=module_name,
        scope_name="",
        name=_last_segment(module_name, spec.separator),
        kind="module",
        start_line=1,
        end_line=text.line_count,
        signature="",
        docstring=module_docstring,
        parent_qualified_name=None,
    )
    symbols = [module_symbol]
    symbols.extend(
        Symbol(
            qualified_name=definition.qualified_name,
            scope_name=definition.scope_name,
            name=definition.name,
            kind=cast(SymbolKind, definition.kind),
            start_line=definition.start_line,
            end_line=definition.end_line,
            signature=definition.signature,
            docstring=definition.docstring,
            parent_qualified_name=(
                definition.parent_qualified_name
                or (definition.parent.qualified_name if definition.parent else module_name)
            ),
        )
        for definition in definitions
        if definition.is_symbol
    )
    relations, dependencies = extract_relations(
        matched,
        compiled,
        text,
        module_name,
        namespace,
        spec.is_package_path(relative_path),
        definitions,
        root,
    )
    drafts = layout_chunks(
        tree_root,
        text,
        module_name,
        # A declaration (signature, type alias, constant) has no body to chunk: it stays a line
        # of its outline (and its text in the chunks around it).
        [definition for definition in definitions if definition.has_body],
        spec.comment_node_types,
        spec.transparent_node_types,
    )
    return FileAnalysis(
        language=spec.name,
        module_name=module_name,
        symbols=tuple(symbols),
        relations=tuple(relations),
        dependencies=tuple(dependencies),
        chunks=number_chunks(drafts, chunk_settings),
        parse_errors=count_parse_errors(tree_root),
        omitted=omitted,
    )
