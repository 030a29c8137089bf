"""Gateway settings from LOCUS_GATEWAY_* (PostgreSQL chosen by the URL alone), and how errors
become status codes: downstream statuses kept, a peer that is down named in the message."""

from __future__ import annotations

import math
from pathlib import Path

import grpc
import pytest

from locus.config import SettingsError, load_settings
from locus.database import normalize_url
from locus.gateway.adapters.grpc_servicer import as_service_error
from locus.gateway.adapters.peer_clients import Peer, translate_error
from locus.gateway.domain.errors import (
    InvalidPageToken,
    InvalidRequest,
    ProjectNotScanned,
    RequestIdTaken,
    RequestNotFound,
)
from locus.gateway.settings import GatewaySettings
from locus.rpc import NotFound

pytestmark = pytest.mark.unit

RETRIEVAL = Peer("retrieval", "127.0.0.1:50053", 15.0)


def rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


def test_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("LOCUS_GATEWAY_GRPC_PORT", "LOCUS_GATEWAY_DATABASE_URL", "LOCUS_RETRIEVAL_ADDR"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(GatewaySettings, data_dir=tmp_path)
    assert settings.service_name == "gateway"
    assert settings.grpc_port == 50050
    assert settings.peers.retrieval_addr == "127.0.0.1:50053"
    assert settings.sqlalchemy_url("gateway.db") == (
        f"sqlite+aiosqlite:///{(tmp_path / 'gateway.db').resolve()}"
    )


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_GATEWAY_GRPC_PORT", "6000")
    monkeypatch.setenv("LOCUS_GATEWAY_DATABASE_URL", "postgresql://locus@db:5432/locus")
    monkeypatch.setenv("LOCUS_GATEWAY_SEARCH_TOP_K", "80")
    monkeypatch.setenv("LOCUS_RETRIEVAL_ADDR", "retrieval:50053")
    monkeypatch.setenv("LOCUS_GATEWAY_RANKING_WEIGHTS", '{"graph": 0.25}')
    settings = load_settings(GatewaySettings)
    assert settings.ranking_weights == {"graph": 0.25}
    assert settings.grpc_port == 6000
    assert settings.search_top_k == 80
    assert settings.peers.retrieval_addr == "retrieval:50053"
    url = settings.sqlalchemy_url("gateway.db")
    assert normalize_url(url) == "postgresql+asyncpg://locus@db:5432/locus"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LOCUS_GATEWAY_SEARCH_TOP_K", "0"),
        ("LOCUS_GATEWAY_RETRIEVAL_TIMEOUT_SECONDS", "-1"),
        ("LOCUS_GATEWAY_DEFAULT_MAX_FILES", "500"),
        ("LOCUS_GATEWAY_RANKING_WEIGHTS", '{"no_such_weight": 1}'),
        ("LOCUS_GATEWAY_RANKING_WEIGHTS", '{"max_evidence": 3}'),  # not a float or bool weight
    ],
)
def test_invalid_settings_fail_fast(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError):
        load_settings(GatewaySettings)


def test_a_rerank_endpoint_needs_its_model_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_URL", "http://gpu:8000/v1")
    with pytest.raises(SettingsError, match="LOCUS_GATEWAY_RERANK_MODEL"):
        load_settings(GatewaySettings)
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_MODEL", "BAAI/bge-reranker-v2-m3")
    settings = load_settings(GatewaySettings)
    assert (settings.rerank_url, settings.rerank_top_n) == ("http://gpu:8000/v1", 30)
    assert settings.rerank_weight == 0.25  # mixed with the ranking, not followed alone


def test_the_rerank_weight_is_above_zero_or_inf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_WEIGHT", "inf")  # the endpoint's order alone
    assert math.isinf(load_settings(GatewaySettings).rerank_weight)
    monkeypatch.setenv("LOCUS_GATEWAY_RERANK_WEIGHT", "0")
    with pytest.raises(
        SettingsError, match="LOCUS_GATEWAY_RERANK_WEIGHT: Input should be greater than 0"
    ):
        load_settings(GatewaySettings)


def test_a_peer_that_is_down_is_unavailable_and_named() -> None:
    error = translate_error(
        RETRIEVAL, rpc_error(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses")
    )
    assert error.code == grpc.StatusCode.UNAVAILABLE
    assert error.message == (
        "retrieval service at 127.0.0.1:50053 is unavailable: failed to connect to all addresses"
    )


def test_a_slow_peer_exceeds_its_deadline() -> None:
    error = translate_error(RETRIEVAL, rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline"))
    assert error.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert error.message == (
        "retrieval service at 127.0.0.1:50053 did not answer within 15s: Deadline"
    )


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
    ],
)
def test_other_downstream_statuses_are_kept(code: grpc.StatusCode) -> None:
    error = translate_error(RETRIEVAL, rpc_error(code, "the downstream's own words"))
    assert (error.code, error.message) == (code, "the downstream's own words")


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InvalidRequest("x"), grpc.StatusCode.INVALID_ARGUMENT),
        (InvalidPageToken("x"), grpc.StatusCode.INVALID_ARGUMENT),
        (RequestNotFound("x"), grpc.StatusCode.NOT_FOUND),
        (ProjectNotScanned("x"), grpc.StatusCode.FAILED_PRECONDITION),
        (RequestIdTaken("x"), grpc.StatusCode.ALREADY_EXISTS),
        (NotFound("x"), grpc.StatusCode.NOT_FOUND),
    ],
)
def test_errors_map_to_status_codes(error: Exception, code: grpc.StatusCode) -> None:
    mapped = as_service_error(error)
    assert mapped is not None
    assert (mapped.code, mapped.message) == (code, "x")


def test_bugs_are_not_mapped() -> None:
    assert as_service_error(KeyError("x")) is None
