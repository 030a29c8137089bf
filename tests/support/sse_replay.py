"""A real HTTP server (stdlib ``http.server`` in a thread) that replays recorded
OpenAI-compatible chat-completion streams, for protocol tests of the OpenAI-compatible
generator: chunked ``text/event-stream`` bodies event by event, error statuses, dropped
connections, and a record of every request and of clients that went away mid-stream."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "contract" / "answer" / "transcripts"


def transcript(name: str) -> str:
    return (TRANSCRIPTS / name).read_text(encoding="utf-8")


def slow_transcript(tokens: int = 400) -> str:
    """A long vLLM-style stream (for cancelling in the middle of it)."""
    event = {
        "id": "chatcmpl-5e0f1d2c3b4a59687766554433221100",
        "object": "chat.completion.chunk",
        "created": 1763780999,
        "model": "Qwen/Qwen2.5-Coder-7B-Instruct",
        "choices": [{"index": 0, "delta": {"content": " retry"}, "finish_reason": None}],
    }
    body = "".join(f"data: {json.dumps(event)}\n\n" for _ in range(tokens))
    return body + "data: [DONE]\n\n"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up is what these tests do on purpose; stay quiet about it."""


@dataclass
class Reply:
    """What the server does with one request."""

    status: int = 200
    sse: str = ""  # the event stream to send (status 200)
    body: str = ""  # the body of an error status
    headers: dict[str, str] = field(default_factory=dict)
    event_delay_seconds: float = 0.0
    drop_after_events: int | None = None  # cut the connection after this many events
    hang_up_at_once: bool = False  # close the connection without any response


@dataclass
class SeenRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ReplayServer:
    def __init__(self, default: Reply | None = None) -> None:
        self.default = default or Reply(sse=transcript("vllm_chat_stream.sse"))
        self.script: deque[Reply] = deque()
        self.requests: list[SeenRequest] = []
        self.completed_streams = 0
        self.client_disconnects = 0
        self.disconnected = threading.Event()
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def then(self, *replies: Reply) -> ReplayServer:
        self.script.extend(replies)
        return self

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self) -> Reply:
        with self._lock:
            return self.script.popleft() if self.script else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                replay.requests.append(
                    SeenRequest(self.path, dict(self.headers.items()), json.loads(raw or b"{}"))
                )
                reply = replay._next_reply()
                if reply.hang_up_at_once:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if reply.status != 200:
                    payload = reply.body.encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self._stream(reply)

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                events = [e + "\n\n" for e in reply.sse.split("\n\n") if e.strip()]
                try:
                    for sent, event in enumerate(events):
                        if reply.drop_after_events is not None and sent >= reply.drop_after_events:
                            self.connection.shutdown(socket.SHUT_RDWR)
                            self.close_connection = True
                            return
                        data = event.encode()
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                        if reply.event_delay_seconds:
                            time.sleep(reply.event_delay_seconds)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    replay.completed_streams += 1
                except (BrokenPipeError, ConnectionResetError):
                    replay.client_disconnects += 1
                    replay.disconnected.set()
                    self.close_connection = True

        return Handler


def free_port_url() -> str:
    """An OpenAI-style base URL on a loopback port where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
