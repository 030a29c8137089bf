"""Fixtures for the ast domain tests: the realistic `uploads` package under fixtures/."""

from collections.abc import Callable
from pathlib import Path

import pytest

from locus.ast.domain import FileAnalysis, extract

UPLOADS = Path(__file__).parent / "fixtures" / "uploads"


@pytest.fixture
def analyse_uploads_file() -> Callable[[str], FileAnalysis]:
    """Analyses a file of the fixture package as if it lived at `src/uploads/<name>`."""

    def analyse(file_name: str) -> FileAnalysis:
        return extract(f"src/uploads/{file_name}", (UPLOADS / file_name).read_bytes(), "python")

    return analyse
