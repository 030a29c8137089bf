"""Composition root of the MCP server: the only place that reads settings and builds the
gateway client (over TLS with the stack's mTLS files), the tools, the MCP server (stdio or
Streamable HTTP with GET /healthz) and telemetry."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import uvicorn
from mcp.server.mcpserver import MCPServer
from opentelemetry.sdk.trace.export import SpanExporter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from locus.config import CredentialSettings
from locus.mcp.adapters.gateway_client import GatewayClient
from locus.mcp.adapters.tools import CredentialSource, LocusTools, ToolLimits
from locus.mcp.settings import McpSettings
from locus.rpc import TlsMaterial
from locus.telemetry import Telemetry, configure_logging, setup_telemetry

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Locus answers questions about scanned code bases. Start with list_projects; `locate` finds "
    "the files and symbols a question, bug report or stack trace is about; `read_file` shows "
    "their lines; `get_symbol` a symbol's parents and relations; `impact` what a change to the "
    "code a question points at could affect, `symbol_impact` what a change to one symbol could "
    "affect; `ask` a grounded answer with citations."
)


@dataclass
class McpRuntime:
    settings: McpSettings
    server: MCPServer
    gateway: GatewayClient
    telemetry: Telemetry

    def http_app(self) -> Starlette:
        """The Streamable HTTP app: the MCP endpoint at ``settings.http_path`` (stateless: each
        request stands alone and carries its caller's credential) and GET /healthz."""
        app = self.server.streamable_http_app(
            streamable_http_path=self.settings.http_path,
            stateless_http=True,
            host=self.settings.http_host,
        )
        app.add_route("/healthz", self._healthz, methods=["GET"])
        return app

    async def _healthz(self, request: Request) -> Response:
        """200 once the gateway answers its health check as SERVING, else 503 with why."""
        health = await self.gateway.health()
        serving = health == "SERVING"
        body = {"status": "SERVING" if serving else "NOT_SERVING", "gateway": self.gateway.address}
        return JSONResponse(
            body if serving else body | {"error": health}, status_code=200 if serving else 503
        )

    async def serve_http(self) -> None:
        config = uvicorn.Config(
            self.http_app(),
            host=self.settings.http_host,
            port=self.settings.http_port,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=int(self.settings.shutdown_grace_seconds),
        )
        log.info(
            "mcp serving Streamable HTTP on http://%s:%d%s, %s",
            self.settings.http_host,
            self.settings.http_port,
            self.settings.http_path,
            self.gateway.transport,
        )
        try:
            await uvicorn.Server(config).serve()
        finally:
            await self.close()

    async def serve_stdio(self) -> None:
        log.info("mcp serving stdio, %s", self.gateway.transport)
        try:
            await self.server.run_stdio_async()
        finally:
            await self.close()

    async def close(self) -> None:
        await self.gateway.close()
        self.telemetry.shutdown()


def gateway_tls(credentials: CredentialSettings | None) -> TlsMaterial | None:
    """The stack's mTLS files (``LOCUS_TLS_CERT_FILE``, ``_KEY_FILE``, ``_CA_FILE``, as every
    service reads them; docs/adr/0009), read now, when all three are set: the gateway is then
    called over TLS. Never the service token, which the MCP server does not hold."""
    if credentials is None:
        return None
    cert_file, key_file = credentials.tls_cert_file, credentials.tls_key_file
    ca_file = credentials.tls_ca_file
    if cert_file is None or key_file is None or ca_file is None:
        return None  # as for the services: the CA alone verifies NATS, it turns no TLS on
    return TlsMaterial.from_files(cert_file, key_file, ca_file)


def build(
    settings: McpSettings,
    *,
    credentials: CredentialSettings | None = None,
    exporters: Sequence[SpanExporter] = (),
    stdio_credential: str = "",
) -> McpRuntime:
    """The MCP server over the gateway at ``settings.gateway_addr``, over TLS when
    ``credentials`` name the mTLS files (None: plaintext). ``stdio_credential``: the one
    credential of a stdio server; an HTTP server passes each request's own on."""
    configure_logging(settings.service_name, level=settings.log_level, json_lines=settings.log_json)
    telemetry = setup_telemetry(settings.service_name, exporters=exporters)
    gateway = GatewayClient(
        settings.gateway_addr,
        telemetry,
        tls=gateway_tls(credentials),
        timeout_seconds=settings.gateway_timeout_seconds,
        ask_timeout_seconds=settings.ask_timeout_seconds,
    )
    server: MCPServer = MCPServer(
        name="locus",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        log_level=settings.log_level,  # type: ignore[arg-type]
    )
    LocusTools(
        gateway,
        telemetry.tracer("locus.mcp"),
        CredentialSource(stdio_credential),
        ToolLimits(
            max_read_lines=settings.max_read_lines,
            max_read_chars=settings.max_read_chars,
            max_relations=settings.max_relations,
        ),
    ).register(server)

    return McpRuntime(settings, server, gateway, telemetry)
