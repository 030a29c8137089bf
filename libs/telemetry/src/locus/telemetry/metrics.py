"""Prometheus metrics of a Locus process, served on its metrics port (``metrics_port``):
RED for every RPC it serves (rate, errors by status code, duration) and for every event consumer
(messages handled by outcome, handling time), dead letters, each durable consumer's backlog,
scan progress, the embedding rate and cache hits. Each process is one service, so series carry
no service label: the scrape adds job/instance."""

from __future__ import annotations

import logging
import threading
from typing import Protocol
from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Gauge, Histogram, start_http_server

log = logging.getLogger(__name__)

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

RPC_REQUESTS = Counter(
    "locus_rpc_requests",
    "RPCs served, by method and status code.",
    ["method", "code"],
)
RPC_SECONDS = Histogram(
    "locus_rpc_duration_seconds",
    "Time to answer an RPC (a stream: until its last message), by method.",
    ["method"],
    buckets=_LATENCY_BUCKETS,
)
EVENTS = Counter(
    "locus_events_consumed",
    "Event deliveries a consumer finished, by outcome: ok, retried (negatively acknowledged for "
    "a later delivery) or dead_lettered.",
    ["consumer", "subject", "outcome"],
)
EVENT_SECONDS = Histogram(
    "locus_event_handling_seconds",
    "Time a consumer took to handle one delivery (a batch lane: one batch), by consumer.",
    ["consumer", "subject"],
    buckets=_LATENCY_BUCKETS,
)
DEAD_LETTERS = Counter(
    "locus_dead_letters",
    "Messages moved to the dead-letter subject, by consumer and original subject.",
    ["consumer", "subject"],
)
CONSUMER_PENDING = Gauge(
    "locus_consumer_pending_messages",
    "Messages of a durable consumer not yet delivered to it (its queue lag), as JetStream "
    "reports it.",
    ["consumer", "subject"],
)
CONSUMER_ACK_PENDING = Gauge(
    "locus_consumer_ack_pending_messages",
    "Messages delivered to a durable consumer and not yet acknowledged (in flight).",
    ["consumer", "subject"],
)
SCAN_FILES = Counter(
    "locus_scan_files",
    "Files scans walked, by what became of them: added, modified, deleted (each sent to be "
    "indexed), unchanged or skipped.",
    ["outcome"],
)
SCANS = Counter(
    "locus_scans",
    "Scan jobs that reached a level: searchable, embedded (vectors too) or failed.",
    ["level"],
)
INDEXED_FILES = Counter(
    "locus_indexed_files",
    "File reports a stage published in index.updated, by stage (ast, retrieval, impact: the file "
    "is searchable there; vectors: embedded) and status (indexed, skipped, failed).",
    ["stage", "status"],
)
EMBEDDED_CHUNKS = Counter(
    "locus_embedded_chunks",
    "Chunks given vectors by the vectors lane, by where the vector came from: computed by the "
    "embedder, or cache (the embedding cache, keyed by content hash).",
    ["source"],
)
CACHE_LOOKUPS = Counter(
    "locus_cache_lookups",
    "Look-ups in a cache, by cache and result (hit or miss).",
    ["cache", "result"],
)


class MetricsSettings(Protocol):
    metrics_host: str
    metrics_port: int | None


class MetricsEndpoint:
    """``/metrics`` over HTTP in a thread, for a service's whole life (started first, stopped
    last, so a scrape sees the shutdown too)."""

    def __init__(self, host: str, port: int) -> None:
        self._host, self._requested_port = host, port
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @classmethod
    def from_settings(cls, settings: MetricsSettings) -> MetricsEndpoint | None:
        """The endpoint the settings ask for; None when no metrics port is set."""
        if settings.metrics_port is None:
            return None
        return cls(settings.metrics_host, settings.metrics_port)

    async def start(self) -> None:
        self._server, self._thread = start_http_server(self._requested_port, addr=self._host)
        self.port = int(self._server.server_port)
        log.info("metrics on http://%s:%d/metrics", self._host, self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
