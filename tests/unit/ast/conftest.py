"""Fixtures for the ast domain tests: the realistic `uploads` package under fixtures/."""

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from locus.ast.adapters.store import AstStore
from locus.ast.domain import FileAnalysis, extract
from locus.database import Database

UPLOADS = Path(__file__).parent / "fixtures" / "uploads"


@pytest.fixture
def analyse_uploads_file() -> Callable[[str], FileAnalysis]:
    """Analyses a file of the fixture package as if it lived at `src/uploads/<name>`."""

    def analyse(file_name: str) -> FileAnalysis:
        return extract(f"src/uploads/{file_name}", (UPLOADS / file_name).read_bytes(), "python")

    return analyse


@pytest.fixture
async def sqlite_ast_store(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AstStore]:
    """A fresh ast store on an SQLite file (the embedded default; outside the test's own
    tmp_path, which tests fill with source trees), closed after the test."""
    directory = tmp_path_factory.mktemp("ast-store")
    store = AstStore(Database(f"sqlite+aiosqlite:///{directory / 'ast.db'}"))
    await store.initialize()
    try:
        yield store
    finally:
        await store.close()
