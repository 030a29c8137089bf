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
