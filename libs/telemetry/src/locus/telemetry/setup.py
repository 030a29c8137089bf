"""Explicit tracer-provider setup. Exporters come from the standard OTEL_* variables:

- ``OTEL_TRACES_EXPORTER``: ``otlp`` (default when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set), ``console``, or ``none``;
- ``LOCUS_TRACES_FILE``: also append finished spans as JSON lines to this file (local debugging).
Every span gets ``locus.request_id`` from the baggage of its parent context.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry import propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

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

        processors.append(BatchSpanProcessor(OTLPSpanExporter()))
    elif choice == "console":
        processors.append(SimpleSpanProcessor(ConsoleSpanExporter()))
    traces_file = os.environ.get("LOCUS_TRACES_FILE")
    if traces_file:
        processors.append(BatchSpanProcessor(JsonLinesSpanExporter(Path(traces_file))))
    return processors


def setup_telemetry(
    service_name: str,
    *,
    exporters: Sequence[SpanExporter] = (),
    from_environment: bool = True,
    set_global: bool = True,
) -> Telemetry:
    """Create this process's tracer provider. ``exporters`` (e.g. an in-memory exporter in
    tests) are added with a synchronous processor on top of what the environment asks for."""
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
    processors.extend(SimpleSpanProcessor(exporter) for exporter in exporters)
    for processor in processors:
        provider.add_span_processor(processor)
    # W3C trace context + baggage on every hop; the request ID rides in baggage.
    propagate.set_global_textmap(
        CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
    )
    if set_global:
        trace.set_tracer_provider(provider)
    return Telemetry(provider=provider, service_name=service_name, extra_processors=processors)
