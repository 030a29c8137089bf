"""Registry of supported languages and their compiled tree-sitter queries (compiled once each)."""

import functools
from dataclasses import dataclass
from importlib import resources

from tree_sitter import Language, Query
from tree_sitter_language_pack import get_language

from locus.ast.domain.errors import UnsupportedLanguage
from locus.ast.domain.language_spec import NO_ROOT, LanguageSpec, SourceRoot
from locus.ast.domain.python_language import PYTHON
from locus.ast.domain.specs import discovered_specs

_QUERY_PACKAGE = __name__.rpartition(".")[0]
_SPECS: dict[str, LanguageSpec] = {spec.name: spec for spec in (PYTHON, *discovered_specs())}


@dataclass(frozen=True, slots=True)
class CompiledLanguage:
    """A spec with its grammar and queries; queries are None where no query file exists."""

    spec: LanguageSpec
    grammar: Language
    definitions: Query | None
    docstrings: Query | None
    imports: Query | None
    calls: Query | None
    inheritance: Query | None
    package: Query | None


def supported_languages() -> tuple[str, ...]:
    return tuple(sorted(_SPECS))


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

    def compile_query(query_name: str) -> Query | None:
        text = _read_query(spec.query_sources.get(query_name, spec.name), query_name)
        return None if text is None else Query(grammar, text)

    return CompiledLanguage(
        spec=spec,
        grammar=grammar,
        definitions=compile_query("definitions"),
        docstrings=compile_query("docstrings"),
        imports=compile_query("imports"),
        calls=compile_query("calls"),
        inheritance=compile_query("inheritance"),
        package=compile_query("package"),
    )
