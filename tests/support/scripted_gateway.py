"""A scripted Gateway servicer on a real gRPC port, and the ``locus`` CLI run as a process
against it (``--gateway``), for the CLI's integration tests."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from required import unavailable

from locus.v1 import gateway_pb2_grpc

LOCUS = Path(sys.executable).parent / "locus"
LocusRunner = Callable[..., Awaitable[tuple[int, str, str]]]


@asynccontextmanager
async def serve_gateway(servicer: gateway_pb2_grpc.GatewayServicer) -> AsyncIterator[str]:
    """Serve ``servicer`` on a free local port; yields its address (host:port)."""
    server = grpc.aio.server()
    gateway_pb2_grpc.add_GatewayServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)


def cli_environment(tmp_path: Path) -> dict[str, str]:
    """The environment for a ``locus`` process: no inherited LOCUS_* settings, its own home."""
    if not LOCUS.exists():
        unavailable("the locus CLI", f"{LOCUS} is missing: pip install -e libs/cli")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCUS_")}
    env["LOCUS_HOME"] = str(tmp_path / "home")
    return env


def locus_runner(env: dict[str, str], address: str) -> LocusRunner:
    """``await run(*args)`` runs ``locus *args --gateway address`` → (exit code, stdout, stderr)."""

    async def run(*args: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            str(LOCUS), *args, "--gateway", address,
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        stdout, stderr = await process.communicate()
        assert process.returncode is not None
        return process.returncode, stdout.decode(), stderr.decode()

    return run
