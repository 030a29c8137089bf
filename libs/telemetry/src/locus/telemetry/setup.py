"""Explicit tracer-provider setup. Exporters come from the standard OTEL_* variables:

- ``OTEL_TRACES_EXPORTER``: ``otlp`` (default when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set), ``console``, or ``none``;
- ``LOCUS_TRACES_FILE``: also append finished spans as JSON lines to this file (local debugging).
Every span gets ``locus.request_id`` from the baggage of its parent context. Every exporter
(those the environment asks for and those a caller passes) sees spans through
``RedactingSpanExporter``: credentials in attribute values, event attributes, exception
messages and the status description are masked (``locus.config.redaction``) before a span
leaves the process, whichever instrumentation set them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.trace.status import Status

from locus.config.redaction import redact
from locus.telemetry.request_id import REQUEST_ID_ATTRIBUTE, current_request_id


class RequestIdSpanProcessor(SpanProcessor):
    """Copies the request ID from baggage onto every span as it starts."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        request_id = current_request_id(parent_context)
        if request_id:
            span.set_attribute(REQUEST_ID_ATTRIBUTE, request_id)

    def on_end(self, span: ReadableSpan) -> None:
        return None

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _redacted_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, tuple | list):
        return type(value)(_redacted_value(item) for item in value)
    return value


def _redacted_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {key: _redacted_value(value) for key, value in (attributes or {}).items()}


def redacted_span(span: ReadableSpan) -> ReadableSpan:
    """A copy of ``span`` whose attribute values, event attributes (exception messages and
    stack traces included) and status description carry no credentials; ``span`` itself when
    there was nothing to mask."""
    attributes = _redacted_attributes(span.attributes)
    events = [_redacted_attributes(event.attributes) for event in span.events]
    description = span.status.description or ""
    unchanged = (
        attributes == dict(span.attributes or {})
        and all(
            new == dict(old.attributes or {}) for new, old in zip(events, span.events, strict=True)
        )
        and redact(description) == description
    )
    if unchanged:
        return span
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=[
            Event(event.name, redacted, event.timestamp)
            for event, redacted in zip(span.events, events, strict=True)
        ],
        links=span.links,
        kind=span.kind,
        status=Status(span.status.status_code, redact(description)) if description else span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class RedactingSpanExporter(SpanExporter):
    """Masks credentials in every span (``redacted_span``) before the wrapped exporter sees it:
    one place for what each adapter would otherwise have to remember."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([redacted_span(span) for span in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class JsonLinesSpanExporter(SpanExporter):
    """Appends spans to a file, one JSON object per line (for local runs and debugging)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = [span.to_json(indent=None) for span in spans]
        with self._lock, self._path.open("a", encoding="utf-8") as handle:
            for line in lines:
                handle.write(json.dumps(json.loads(line), separators=(",", ":")) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


@dataclass
class Telemetry:
    """The tracer provider of one process and how to flush it on shutdown."""

    provider: TracerProvider
    service_name: str
    extra_processors: list[SpanProcessor] = field(default_factory=list)

    def tracer(self, name: str) -> trace.Tracer:
        return self.provider.get_tracer(name)

    def shutdown(self) -> None:
        self.provider.force_flush(timeout_millis=5000)
        self.provider.shutdown()


def _exporter_from_environment() -> list[SpanProcessor]:
    processors: list[SpanProcessor] = []
    choice = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    has_endpoint = bool(
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    if choice == "otlp" or (not choice and has_endpoint):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        processors.append(BatchSpanProcessor(RedactingSpanExporter(OTLPSpanExporter())))
    elif choice == "console":
        processors.append(SimpleSpanProcessor(RedactingSpanExporter(ConsoleSpanExporter())))
    traces_file = os.environ.get("LOCUS_TRACES_FILE")
    if traces_file:
        exporter = RedactingSpanExporter(JsonLinesSpanExporter(Path(traces_file)))
        processors.append(BatchSpanProcessor(exporter))
    return processors


def setup_telemetry(
    service_name: str,
    *,
    exporters: Sequence[SpanExporter] = (),
    from_environment: bool = True,
    set_global: bool = True,
) -> Telemetry:
    """Create this process's tracer provider. ``exporters`` (e.g. an in-memory exporter in
    tests) are added with a synchronous processor on top of what the environment asks for;
    every exporter sees redacted spans."""
    resource = Resource.create(
        {
            "service.name": service_name,
            "service.namespace": "locus",
            "service.instance.id": f"{service_name}-{os.getpid()}",
        }
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(RequestIdSpanProcessor())
    processors: list[SpanProcessor] = []
    if from_environment:
        processors.extend(_exporter_from_environment())
    processors.extend(
        SimpleSpanProcessor(RedactingSpanExporter(exporter)) for exporter in exporters
    )
    for processor in processors:
        provider.add_span_processor(processor)
    # W3C trace context + baggage on every hop; the request ID rides in baggage.
    propagate.set_global_textmap(
        CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
    )
    if set_global:
        trace.set_tracer_provider(provider)
    return Telemetry(provider=provider, service_name=service_name, extra_processors=processors)
