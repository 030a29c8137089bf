"""What a parser process sends the ast service: an analysis pickled by its fields."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from locus.ast.domain import extract

pytestmark = pytest.mark.unit

SOURCE = b'''"""Uploads."""

from .policy import RetryPolicy


class UploadClient(Base):
    """Sends files."""

    def send(self, path):
        return RetryPolicy().run(path)
'''


def test_an_analysis_survives_the_trip_to_the_service_unchanged() -> None:
    analysis = extract("uploads/client.py", SOURCE, "python")
    assert analysis.symbols
    assert analysis.relations
    assert analysis.dependencies
    assert analysis.chunks
    copy = pickle.loads(pickle.dumps(analysis))
    assert copy == analysis
    for item in (
        analysis.symbols[0],
        analysis.relations[0],
        analysis.dependencies[0],
        analysis.chunks[0],
    ):
        cls, values = item.__reduce__()
        assert cls is type(item)
        assert values == tuple(getattr(item, f.name) for f in dataclasses.fields(item))
