"""Symbol names as people paste them, read as the stored qualified names write them."""

import pytest

from locus.ast.domain.written_names import searched_symbol_name, stored_symbol_name

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("(*ClientConn).Invoke", "ClientConn.Invoke"),
        ("google.golang.org/grpc.(*ClientConn).Invoke", "google.golang.org/grpc.ClientConn.Invoke"),
        ("(Invoice).Price", "Invoice.Price"),
        ("cache.(*LRU[K]).Get", "cache.LRU.Get"),
        ("XmlMapper#readValue", "XmlMapper.readValue"),
        ("com.acme.FromXmlParser$Feature", "com.acme.FromXmlParser.Feature"),
        ("ReservationService$1", "ReservationService.1"),
        ("Serilog.LoggerConfiguration..ctor", "Serilog.LoggerConfiguration.LoggerConfiguration"),
        ("Log..cctor", "Log.Log"),
        ("\\GuzzleHttp\\Client::request", "GuzzleHttp\\Client::request"),
        ("GuzzleHttp\\Client->request()", "GuzzleHttp\\Client::request"),
        ("Client::request()", "Client::request"),
        ("Rack::Request::Helpers#host", "Rack::Request::Helpers::host"),
        ("Rack::Utils.parse_query", "Rack::Utils::parse_query"),
        ("std::vector.push_back", "std::vector::push_back"),
        # Left as written: names that mean themselves in their language.
        ("$http", "$http"),
        ("angular.$scope", "angular.$scope"),
        ("fmt::detail::write", "fmt::detail::write"),
        ("App\\Billing\\Invoice::total", "App\\Billing\\Invoice::total"),
        ("readValue(String content, Class<T> type)", "readValue(String content, Class<T> type)"),
        ("#include", "#include"),
        ("\\", "\\"),
        ("ctor", "ctor"),
        ("Invoice.ctor", "Invoice.ctor"),
        ("ForContext(string propertyName)", "ForContext(string propertyName)"),
    ],
)
def test_pasted_names_read_as_stored(written: str, stored: str) -> None:
    assert stored_symbol_name(written) == stored


def test_a_rust_crate_path_searches_for_the_rest() -> None:
    # `crate::` is the crate's own name in stored names (walkdir::IntoIter::next).
    assert searched_symbol_name("crate::IntoIter::next", whole_name=False) == "IntoIter::next"
    assert searched_symbol_name("crate::IntoIter::next", whole_name=True) == (
        "crate::IntoIter::next"  # a whole qualified name (a crate without a Cargo name)
    )
    assert searched_symbol_name("(*ClientConn).Invoke", whole_name=False) == "ClientConn.Invoke"
