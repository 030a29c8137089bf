import pytest

from locus.ast.adapters.grpc_servicer import decode_page_token, encode_page_token
from locus.ast.settings import AstSettings
from locus.config import SettingsError, load_settings
from locus.rpc import InvalidArgument

pytestmark = pytest.mark.unit


def test_defaults_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCUS_AST_PARSE_WORKERS", "8")
    monkeypatch.setenv("LOCUS_AST_CHUNK_MAX_LINES", "40")
    monkeypatch.setenv("LOCUS_INGESTION_ADDR", "ingestion:9000")

    settings = load_settings(AstSettings)

    assert (settings.service_name, settings.grpc_port) == ("ast", 50052)
    assert settings.parse_workers == 8
    assert settings.max_items_per_part == 400
    assert settings.chunking_policy.max_lines == 40
    assert settings.peers.ingestion_addr == "ingestion:9000"


def test_inconsistent_chunking_fails_at_start_with_the_variable_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCUS_AST_CHUNK_MAX_LINES", "10")
    monkeypatch.setenv("LOCUS_AST_CHUNK_OVERLAP_LINES", "10")

    with pytest.raises(SettingsError, match="chunk_overlap_lines"):
        load_settings(AstSettings)


def test_page_tokens_round_trip_only_for_their_own_query() -> None:
    token = encode_page_token(150, "query-a")

    assert decode_page_token(token, "query-a") == 150
    with pytest.raises(InvalidArgument, match="different query"):
        decode_page_token(token, "query-b")


@pytest.mark.parametrize("token", ["bogus!", "e30=", "eyJvIjogLTF9", "eyJvIjogdHJ1ZX0="])
def test_foreign_page_tokens_are_invalid_arguments(token: str) -> None:
    with pytest.raises(InvalidArgument, match="not one this server issued"):
        decode_page_token(token, "query-a")
