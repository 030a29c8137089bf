"""Symbol names as people paste them, read as the stored qualified names write them."""

import pytest

from locus.ast.domain.written_names import stored_symbol_name

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
        # Left as written: names that mean themselves in their language.
        ("$http", "$http"),
        ("angular.$scope", "angular.$scope"),
        ("fmt::detail::write", "fmt::detail::write"),
        ("App\\Billing\\Invoice::total", "App\\Billing\\Invoice::total"),
        ("readValue(String content, Class<T> type)", "readValue(String content, Class<T> type)"),
        ("#include", "#include"),
    ],
)
def test_pasted_names_read_as_stored(written: str, stored: str) -> None:
    assert stored_symbol_name(written) == stored
