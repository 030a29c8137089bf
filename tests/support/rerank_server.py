"""A real HTTP server (stdlib ``http.server`` in a thread) answering ``POST /v1/rerank`` the way
vLLM does for a cross-encoder (the response shape recorded from ``vllm serve
BAAI/bge-reranker-v2-m3``: results sorted by relevance, each with its index, document and
relevance_score), or with the status and body a test sets. It records every request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Scorer = Callable[[str, str], float]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class RerankServer:
    scorer: Scorer
    status: int = 200
    raw_body: str | None = None  # answer this instead of scoring
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append(Recorded(self.path, headers, body))
                if self.path != "/v1/rerank":
                    self._send(404, json.dumps({"detail": "Not Found"}))
                elif owner.raw_body is not None or owner.status != 200:
                    self._send(owner.status, owner.raw_body or '{"error": "overloaded"}')
                else:
                    self._send(200, json.dumps(owner.answer(body)))

            def _send(self, status: int, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        documents: list[str] = body["documents"]
        scored = sorted(
            (
                {
                    "index": i,
                    "document": {"text": text},
                    "relevance_score": self.scorer(body["query"], text),
                }
                for i, text in enumerate(documents)
            ),
            key=lambda r: -float(r["relevance_score"]),
        )[: body.get("top_n") or len(documents)]
        return {
            "id": "rerank-8f0b8bd3a4e14a4c9d0c3f8e2f1a7b65",
            "model": body["model"],
            "usage": {"total_tokens": sum(len(d.split()) for d in documents)},
            "results": scored,
        }
