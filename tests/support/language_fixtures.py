"""Fixture trees of any language through the real extractor and the real ast store (SQLite):
the helpers the per-language tests share."""

from __future__ import annotations

from pathlib import Path

from locus.ast.adapters.messages import source_root
from locus.ast.adapters.store import AstStore, FileIndex, FileVersion
from locus.ast.domain import FileAnalysis, Symbol, extract
from locus.ast.domain.language_spec import NO_ROOT, SourceRoot
from locus.ingestion.adapters.proto_mapping import with_source_root
from locus.ingestion.domain import source_roots
from locus.v1 import events_pb2

AST_FIXTURES = Path(__file__).resolve().parents[1] / "unit" / "ast" / "fixtures"


def detected_root(root: source_roots.SourceRoot) -> SourceRoot:
    """A root ingestion detected, as ast gets it: through files.changed's own mapping."""
    return source_root(with_source_root(events_pb2.ChangedFile(), root))


def fixture_version(
    path: str, language: str, seq: int = 1, *, project_id: str = "p_lang"
) -> FileVersion:
    """The stored version of fixture file `path` (one file id per path) at snapshot `seq`."""
    return FileVersion(
        file_id=f"f_{path.replace('/', '_')}",
        project_id=project_id,
        source_id="src_1",
        relative_path=path,
        sha256=f"{seq:064d}",
        language=language,
        snapshot_id=f"snap_{seq}",
        snapshot_seq=seq,
        job_id=f"job_{seq}",
    )


def analyse_tree(
    root: Path, language: str, *, source_root: SourceRoot = NO_ROOT, suffixes: tuple[str, ...] = ()
) -> dict[str, FileAnalysis]:
    """Every file below `root` (optionally only those ending in `suffixes`), analysed as
    `language` under its repository-relative path."""
    analyses: dict[str, FileAnalysis] = {}
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root).as_posix()
        if suffixes and not relative.endswith(suffixes):
            continue
        analyses[relative] = extract(relative, file.read_bytes(), language, root=source_root)
    return analyses


async def store_tree(
    store: AstStore, analyses: dict[str, FileAnalysis], language: str
) -> dict[str, FileIndex]:
    """Stores every analysis (in path order) and reads each file back as the API serves it,
    with relations and dependencies resolved against the whole tree."""
    for path, analysis in analyses.items():
        await store.replace_file(
            fixture_version(path, language), analysis, unsupported_language=False
        )
    indexes: dict[str, FileIndex] = {}
    for path in analyses:
        index = await store.file_index(fixture_version(path, language).file_id)
        assert index is not None, path
        indexes[path] = index
    return indexes


def symbols_by_name(analysis: FileAnalysis) -> dict[str, Symbol]:
    """The analysis's symbols by qualified name."""
    return {symbol.qualified_name: symbol for symbol in analysis.symbols}


def relation_triples(analysis: FileAnalysis, kind: str) -> set[tuple[str, str, str | None]]:
    """(source, target as written, target qualified name) of the analysis's `kind` relations."""
    return {
        (r.source_qualified_name, r.target_name, r.target_qualified_name)
        for r in analysis.relations
        if r.kind == kind
    }
