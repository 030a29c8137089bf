"""Log records carry trace_id, span_id and request_id, as text or JSON lines."""

from __future__ import annotations

import json
import logging
import sys
import time

from opentelemetry import trace

from locus.config.redaction import RedactingFilter
from locus.telemetry.request_id import current_request_id


class TraceContextFilter(logging.Filter):
    """Adds trace_id / span_id / request_id of the current context to each record."""

    def __init__(self, service_name: str) -> None:
        super().__init__()
        self._service = service_name

    def filter(self, record: logging.LogRecord) -> bool:
        span_context = trace.get_current_span().get_span_context()
        record.trace_id = format(span_context.trace_id, "032x") if span_context.is_valid else "-"
        record.span_id = format(span_context.span_id, "016x") if span_context.is_valid else "-"
        record.request_id = current_request_id() or "-"
        record.service = self._service
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "service": getattr(record, "service", "-"),
            "logger": record.name,
            "message": record.getMessage(),
            "trace_id": getattr(record, "trace_id", "-"),
            "span_id": getattr(record, "span_id", "-"),
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.exc_info:
            payload["exception"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(payload)


TEXT_FORMAT = (
    "%(asctime)s %(levelname)s %(service)s %(name)s "
    "trace_id=%(trace_id)s span_id=%(span_id)s request_id=%(request_id)s %(message)s"
)


def configure_logging(service_name: str, *, level: str = "INFO", json_lines: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(TraceContextFilter(service_name))
    handler.addFilter(RedactingFilter())
    handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("faststream", "nats", "aiosqlite", "sqlalchemy.engine"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
