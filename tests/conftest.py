"""Fixtures shared by every test: a real nats-server, span capture, free ports."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.messaging import EmbeddedNatsServer


@pytest.fixture
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNatsServer]:
    """A real nats-server with JetStream on a random loopback port, private to the test."""
    server = EmbeddedNatsServer(tmp_path_factory.mktemp("nats"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def span_exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_port() -> int:
    return free_port()


class OtlpSink:
    """A real OTLP/gRPC trace receiver on loopback: services export to it exactly as they would
    to an OpenTelemetry collector (OTEL_EXPORTER_OTLP_ENDPOINT)."""

    def __init__(self) -> None:
        import threading
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.trace.v1 import (
            trace_service_pb2,
            trace_service_pb2_grpc,
        )

        sink = self
        self.spans: list[dict[str, object]] = []
        self._lock = threading.Lock()

        class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):  # type: ignore[no-untyped-def]
                sink._collect(request)
                return trace_service_pb2.ExportTraceServiceResponse()

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }

    def _collect(self, request: object) -> None:
        for resource_spans in request.resource_spans:  # type: ignore[attr-defined]
            service = next(
                (
                    a.value.string_value
                    for a in resource_spans.resource.attributes
                    if a.key == "service.name"
                ),
                "?",
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: a.value.string_value for a in span.attributes}
                    with self._lock:
                        self.spans.append(
                            {
                                "service": service,
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_span_id": span.parent_span_id.hex(),
                                "kind": int(span.kind),
                                "attributes": attributes,
                            }
                        )

    def snapshot(self) -> list[dict[str, object]]:
        with self._lock:
            return list(self.spans)

    def edges(self, trace_id: str | None = None) -> set[tuple[str, str]]:
        """(parent service, child service) for every parent→child span pair that crosses
        services — the edges of a trace, as the OpenTelemetry demo's trace tests assert."""
        spans = [s for s in self.snapshot() if trace_id is None or s["trace_id"] == trace_id]
        by_id = {span["span_id"]: span for span in spans}
        found: set[tuple[str, str]] = set()
        for span in spans:
            parent = by_id.get(span["parent_span_id"])
            if parent is not None and parent["service"] != span["service"]:
                found.add((str(parent["service"]), str(span["service"])))
        return found

    def stop(self) -> None:
        self._server.stop(grace=None)


@pytest.fixture
def otlp_sink() -> Iterator[OtlpSink]:
    sink = OtlpSink()
    yield sink
    sink.stop()


@pytest.fixture(scope="module")
def module_otlp_sink() -> Iterator[OtlpSink]:
    """One OTLP receiver for every test of a module (for module-scoped stacks)."""
    sink = OtlpSink()
    yield sink
    sink.stop()
