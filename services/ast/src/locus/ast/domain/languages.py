"""Registry of supported languages and their compiled tree-sitter queries (compiled once each)."""

import functools
from dataclasses import dataclass
from importlib import resources

from tree_sitter import Language, Node, Query, QueryCursor
from tree_sitter_language_pack import get_language

from locus.ast.domain.errors import UnsupportedLanguage
from locus.ast.domain.language_spec import NO_ROOT, LanguageSpec, SourceRoot
from locus.ast.domain.python_language import PYTHON
from locus.ast.domain.specs import discovered_specs

_QUERY_PACKAGE = __name__.rpartition(".")[0]
_SPECS: dict[str, LanguageSpec] = {spec.name: spec for spec in (PYTHON, *discovered_specs())}


_QUERY_NAMES = (
    "package",
    "definitions",
    "docstrings",
    "imports",
    "inheritance",
    "calls",
    "locals",
)


@dataclass(frozen=True, slots=True)
class CompiledLanguage:
    """A spec with its grammar and queries; queries are None where no query file exists.

    ``combined`` holds the patterns of every query of the language, in ``_QUERY_NAMES`` order,
    and ``pattern_owner`` names the query each of its patterns came from: a query cursor walks
    the whole tree whatever it looks for, so one walk for all of them (``QueryMatches``)
    instead of one per query halves the time the queries take."""

    spec: LanguageSpec
    grammar: Language
    definitions: Query | None
    docstrings: Query | None
    imports: Query | None
    calls: Query | None
    inheritance: Query | None
    package: Query | None
    locals: Query | None = None
    """Variables whose type is written (`@local.name`, `@local.type`): parameters, locals,
    fields. A call on one (`cc.Invoke()` with `cc *ClientConn`) is a method of the type."""
    combined: Query | None = None
    pattern_owner: tuple[str, ...] = ()


Captures = dict[str, list[Node]]


class QueryMatches:
    """Every query of a language run over one tree in one pass; each query's matches in the
    order it gives alone (checked against separate runs on every fixture and on sympy)."""

    def __init__(self, compiled: CompiledLanguage, root: Node) -> None:
        self._by_query: dict[str, list[Captures]] = {}
        if compiled.combined is None:
            return
        owner = compiled.pattern_owner
        for index, captures in QueryCursor(compiled.combined).matches(root):
            self._by_query.setdefault(owner[index], []).append(captures)

    def matches(self, query_name: str) -> list[Captures]:
        return self._by_query.get(query_name, [])

    def captures(self, query_name: str, capture_name: str) -> list[Node]:
        """The nodes captured as ``capture_name`` by the query's matches, in match order."""
        return [
            node for captures in self.matches(query_name) for node in captures.get(capture_name, [])
        ]


def supported_languages() -> tuple[str, ...]:
    return tuple(sorted(_SPECS))


def has_spec(language: str) -> bool:
    """Whether ``language`` is one of ``supported_languages()`` (a lookup, for each file)."""
    return language in _SPECS


def language_spec(language: str) -> LanguageSpec:
    spec = _SPECS.get(language)
    if spec is None:
        raise UnsupportedLanguage(language, supported_languages())
    return spec


def module_name_for_path(
    relative_path: str, language: str = "python", root: SourceRoot = NO_ROOT
) -> str:
    """Module name of a repository-relative path, by the language's naming rules."""
    return language_spec(language).module_name_for_path(relative_path, root)


def _read_query(language: str, query_name: str) -> str | None:
    query_file = resources.files(_QUERY_PACKAGE).joinpath("queries", language, f"{query_name}.scm")
    if not query_file.is_file():
        return None
    return query_file.read_text(encoding="utf-8")


@functools.cache
def compiled_language(language: str) -> CompiledLanguage:
    spec = language_spec(language)
    grammar = get_language(spec.grammar)

    texts = {
        name: text
        for name in _QUERY_NAMES
        if (text := _read_query(spec.query_sources.get(name, spec.name), name)) is not None
    }
    queries = {name: Query(grammar, text) for name, text in texts.items()}
    owner = tuple(name for name, query in queries.items() for _ in range(query.pattern_count))
    combined = Query(grammar, "\n".join(texts.values())) if texts else None
    if combined is not None and combined.pattern_count != len(owner):
        raise AssertionError(f"{spec.name}: the combined query lost or gained patterns")
    return CompiledLanguage(
        spec=spec,
        grammar=grammar,
        definitions=queries.get("definitions"),
        docstrings=queries.get("docstrings"),
        imports=queries.get("imports"),
        calls=queries.get("calls"),
        inheritance=queries.get("inheritance"),
        package=queries.get("package"),
        locals=queries.get("locals"),
        combined=combined,
        pattern_owner=owner,
    )
