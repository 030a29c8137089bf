"""Outbound HTTP that a trace can follow: the calls to the LLM, embeddings and rerank endpoints
get a client span (OpenTelemetry's httpx instrumentation: method, redacted URL, status,
duration), carry the W3C trace context, and send the request ID as ``x-request-id`` so the
endpoint's own logs can be joined to the Locus request."""

from __future__ import annotations

from typing import Any

import httpx
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.trace import TracerProvider

from locus.telemetry.request_id import REQUEST_ID_HEADER, current_request_id


async def _send_request_id(request: httpx.Request) -> None:
    request_id = current_request_id()
    if request_id and REQUEST_ID_HEADER not in request.headers:
        request.headers[REQUEST_ID_HEADER] = request_id


def traced_http_client(tracer_provider: TracerProvider | None, **options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` (built with ``options``) whose every request is traced under
    ``tracer_provider`` (the global provider when None) and carries the request ID."""
    hooks: dict[str, list[Any]] = dict(options.pop("event_hooks", None) or {})
    hooks["request"] = [*hooks.get("request", []), _send_request_id]
    client = httpx.AsyncClient(event_hooks=hooks, **options)
    HTTPXClientInstrumentor.instrument_client(client, tracer_provider=tracer_provider)
    return client
