"""The gateway's rerank API key is a SecretStr: never in the settings' repr or dump, read only
where the rerank endpoint's Authorization header is built."""

from __future__ import annotations

import pytest

from locus.config import load_settings
from locus.gateway.settings import GatewaySettings

pytestmark = pytest.mark.unit

RERANK_KEY = "rerank-key-5e8f"


def test_the_rerank_api_key_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_URL", "http://gpu:8000/v1")
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_MODEL", "BAAI/bge-reranker-v2-m3")
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_API_KEY", RERANK_KEY)
    settings = load_settings(GatewaySettings)

    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        assert RERANK_KEY not in shown
    assert settings.rerank_api_key.get_secret_value() == RERANK_KEY


def test_no_rerank_api_key_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCUS_GATEWAY_RERANK_API_KEY", raising=False)
    assert load_settings(GatewaySettings).rerank_api_key.get_secret_value() == ""
