"""Pure domain of the ast service: language-generic extraction of symbols, relations and chunks."""

from locus.ast.domain.errors import AstDomainError, UndecodableSource, UnsupportedLanguage
from locus.ast.domain.extraction import DEFAULT_CHUNKING_POLICY, extract, extracts
from locus.ast.domain.language_spec import LanguageSpec
from locus.ast.domain.languages import module_name_for_path, supported_languages
from locus.ast.domain.model import (
    Chunk,
    ChunkingPolicy,
    ChunkKind,
    FileAnalysis,
    FileDependency,
    Relation,
    RelationKind,
    Symbol,
    SymbolKind,
)

__all__ = [
    "DEFAULT_CHUNKING_POLICY",
    "AstDomainError",
    "Chunk",
    "ChunkKind",
    "ChunkingPolicy",
    "FileAnalysis",
    "FileDependency",
    "LanguageSpec",
    "Relation",
    "RelationKind",
    "Symbol",
    "SymbolKind",
    "UndecodableSource",
    "UnsupportedLanguage",
    "extract",
    "extracts",
    "module_name_for_path",
    "supported_languages",
]
