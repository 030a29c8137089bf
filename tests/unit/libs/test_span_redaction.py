"""Spans leave a process without credentials, whichever code set the attribute: every exporter
setup_telemetry wires sees them through RedactingSpanExporter."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from locus.telemetry import setup_telemetry

PASSWORD = "hunter2-not-for-traces"
API_KEY_SECRET = "s3cretPart0fTheKey_x"
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"


def test_credentials_are_masked_in_attributes_events_and_status() -> None:
    exported = InMemorySpanExporter()
    telemetry = setup_telemetry(
        "redaction-test", exporters=[exported], from_environment=False, set_global=False
    )
    tracer = telemetry.tracer("test")
    with tracer.start_as_current_span("call") as span:
        span.set_attribute("db.url", f"postgresql://locus:{PASSWORD}@db:5432/locus")
        span.set_attribute("auth.header", f"Bearer lk_0123456789ab_{API_KEY_SECRET}")
        span.set_attribute("urls", [f"https://u:{PASSWORD}@a.example", "https://b.example"])
        span.set_attribute("rows", 3)
        span.record_exception(ValueError(f"refused token={PASSWORD}"))
        span.set_status(Status(StatusCode.ERROR, f"bad credential {JWT}"))
    with tracer.start_as_current_span("clean") as clean:
        clean.set_attribute("path", "src/app.py")
    telemetry.shutdown()

    call, kept = exported.get_finished_spans()
    text = call.to_json()
    for secret in (PASSWORD, API_KEY_SECRET, JWT):
        assert secret not in text
    assert call.attributes["db.url"] == "postgresql://***@db:5432/locus"
    assert call.attributes["auth.header"] == "Bearer ***"
    assert call.attributes["urls"] == ("https://***@a.example", "https://b.example")
    assert call.attributes["rows"] == 3
    (exception,) = call.events
    assert exception.attributes["exception.message"] == "refused token=***"
    assert call.status.description == "bad credential ***"
    assert call.status.status_code is StatusCode.ERROR
    assert call.context.is_valid
    assert kept.attributes["path"] == "src/app.py"
