"""Retrieval's credentials (the embeddings and Qdrant API keys, the OpenSearch URL with its
user-info) are SecretStr: never in the settings' repr, dump or errors, readable only where a
client is built; an API key alone switches no backend to a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from locus.config import SettingsError, load_settings
from locus.retrieval.adapters.edge_vectors import EdgeVectorIndex
from locus.retrieval.adapters.opensearch_bm25 import OpenSearchBM25Index
from locus.retrieval.adapters.tantivy_bm25 import TantivyBM25Index
from locus.retrieval.main import make_bm25, make_vectors
from locus.retrieval.settings import RetrievalSettings

pytestmark = pytest.mark.unit

EMBEDDINGS_KEY = "embeddings-key-4f1c"
QDRANT_KEY = "qdrant-key-9b2e"
OPENSEARCH_PASSWORD = "opensearch-pw-7d3a"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "EMBEDDINGS_URL",
        "EMBEDDINGS_API_KEY",
        "OPENSEARCH_URL",
        "QDRANT_URL",
        "QDRANT_API_KEY",
        "BM25_BACKEND",
        "VECTOR_BACKEND",
    ):
        monkeypatch.delenv(f"LOCUS_RETRIEVAL_{name}", raising=False)


def test_credentials_never_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_RETRIEVAL_EMBEDDINGS_API_KEY", EMBEDDINGS_KEY)
    monkeypatch.setenv("LOCUS_RETRIEVAL_QDRANT_API_KEY", QDRANT_KEY)
    monkeypatch.setenv(
        "LOCUS_RETRIEVAL_OPENSEARCH_URL", f"https://locus:{OPENSEARCH_PASSWORD}@search:9200/"
    )
    settings = load_settings(RetrievalSettings)

    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        for secret in (EMBEDDINGS_KEY, QDRANT_KEY, OPENSEARCH_PASSWORD):
            assert secret not in shown
    assert settings.embeddings_api_key.get_secret_value() == EMBEDDINGS_KEY
    assert settings.qdrant_api_key.get_secret_value() == QDRANT_KEY
    assert settings.opensearch_url.get_secret_value() == (
        f"https://locus:{OPENSEARCH_PASSWORD}@search:9200"
    )
    assert settings.uses_opensearch
    assert isinstance(make_bm25(settings), OpenSearchBM25Index)


def test_api_keys_alone_keep_the_embedded_backends(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCUS_RETRIEVAL_EMBEDDINGS_API_KEY", EMBEDDINGS_KEY)
    monkeypatch.setenv("LOCUS_RETRIEVAL_QDRANT_API_KEY", QDRANT_KEY)
    settings = load_settings(RetrievalSettings, data_dir=tmp_path)

    assert (settings.embeddings_url, settings.uses_opensearch, settings.uses_qdrant_server) == (
        "",
        False,
        False,
    )
    assert isinstance(make_bm25(settings), TantivyBM25Index)
    assert isinstance(make_vectors(settings, 384), EdgeVectorIndex)


def test_an_invalid_opensearch_url_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCUS_RETRIEVAL_OPENSEARCH_URL", f"search:9200?{OPENSEARCH_PASSWORD}")
    with pytest.raises(SettingsError, match=r"LOCUS_RETRIEVAL_OPENSEARCH_URL: .*http") as refused:
        load_settings(RetrievalSettings)
    assert OPENSEARCH_PASSWORD not in str(refused.value)
    monkeypatch.setenv("LOCUS_RETRIEVAL_OPENSEARCH_URL", "")
    monkeypatch.setenv("LOCUS_RETRIEVAL_BM25_BACKEND", "opensearch")
    with pytest.raises(SettingsError, match="LOCUS_RETRIEVAL_OPENSEARCH_URL"):
        load_settings(RetrievalSettings)
