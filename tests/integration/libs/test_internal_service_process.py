"""A real internal service process (``python -m locus.answer``: it needs no bus) with the mesh
credentials of docs/adr/0009 in its environment, as a deployment sets them: it refuses calls
without the service token or with another, serves the ones with it, answers health checks
without it, keeps the token out of its log; with mTLS on only a client with the mesh
certificate gets through; without a token it warns once that it is open; a token it cannot use
stops it at start with a clear line."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from certificates import MeshCertificates, make_mesh_certificates

from locus.rpc import SERVICE_TOKEN_HEADER, MeshCredentials, TlsMaterial, wait_until_serving
from locus.v1 import answer_pb2, answer_pb2_grpc, common_pb2

pytestmark = pytest.mark.integration

TOKEN = "process-test-token-5f2c9a0e7d1b4c38a6"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def service_environment(tmp_path: Path, **settings: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LOCUS_", "OTEL_"))}
    return environment | {
        "LOCUS_ANSWER_DATA_DIR": str(tmp_path / "answer"),
        "LOCUS_LOG_LEVEL": "DEBUG",
        **settings,
    }


@asynccontextmanager
async def answer_process(
    tmp_path: Path, mesh: MeshCredentials | None = None, **settings: str
) -> AsyncIterator[tuple[str, Callable[[], str]]]:
    """The running service's address and a reader of its log (complete once the block ends)."""
    port = free_port()
    log = tmp_path / f"answer-{port}.log"
    environment = service_environment(tmp_path, LOCUS_ANSWER_GRPC_PORT=str(port), **settings)
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "locus.answer",
            env=environment,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    address = f"127.0.0.1:{port}"
    try:
        try:
            await wait_until_serving(address, within_seconds=60, mesh=mesh)
        except TimeoutError:
            pytest.fail(f"the answer service did not start:\n{log.read_text()[-3000:]}")
        yield address, lambda: log.read_text(errors="replace")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()
            await process.wait()


async def generate(channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...] = ()) -> str:
    """The status code name of one Generate call ("OK" when it streamed to the end)."""
    request = answer_pb2.GenerateRequest(
        question="where are retries limited?",
        context=[
            answer_pb2.ContextSnippet(
                citation_id="C1",
                chunk=common_pb2.Chunk(
                    chunk_id="c1",
                    location=common_pb2.CodeLocation(
                        relative_path="a.py", start_line=1, end_line=2
                    ),
                    text="def limit_retries():\n    return 3\n",
                ),
                score=1.0,
            )
        ],
    )
    try:
        async for _ in answer_pb2_grpc.AnswerServiceStub(channel).Generate(
            request, metadata=metadata, timeout=30
        ):
            pass
    except grpc.aio.AioRpcError as error:
        return str(error.code().name)
    return "OK"


async def test_the_service_requires_its_token_but_not_for_health_and_never_logs_it(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "service-token"
    token_file.write_text(TOKEN + "\n")  # as a mounted Secret often ends
    token_file.chmod(0o600)
    async with (
        answer_process(tmp_path, LOCUS_SERVICE_TOKEN_FILE=str(token_file)) as (
            address,
            read_log,
        ),
        grpc.aio.insecure_channel(address) as channel,
    ):
        assert await generate(channel) == "UNAUTHENTICATED"
        wrong = ((SERVICE_TOKEN_HEADER, "an-entirely-different-token-42"),)
        assert await generate(channel, wrong) == "UNAUTHENTICATED"
        assert await generate(channel, ((SERVICE_TOKEN_HEADER, TOKEN),)) == "OK"
    log = read_log()
    assert "internal: service token" in log
    assert "refused /locus.v1.AnswerService/Generate" in log
    assert "open to anyone" not in log
    assert TOKEN not in log


async def test_with_mtls_only_a_client_with_the_mesh_certificate_gets_through(
    tmp_path: Path,
) -> None:
    certificates: MeshCertificates = make_mesh_certificates(tmp_path / "certificates")
    service = certificates.service
    mesh = MeshCredentials(
        TOKEN, TlsMaterial.from_files(service.cert_file, service.key_file, service.ca_file)
    )
    async with answer_process(
        tmp_path, mesh, LOCUS_SERVICE_TOKEN=TOKEN, **service.environment()
    ) as (address, read_log):
        assert mesh.tls is not None
        async with grpc.aio.secure_channel(address, mesh.tls.channel_credentials()) as channel:
            assert await generate(channel, mesh.metadata()) == "OK"
        async with grpc.aio.insecure_channel(address) as channel:
            assert await generate(channel, mesh.metadata()) == "UNAVAILABLE"
        rogue = grpc.ssl_channel_credentials(
            root_certificates=service.ca_file.read_bytes(),
            private_key=certificates.rogue.key_file.read_bytes(),
            certificate_chain=certificates.rogue.cert_file.read_bytes(),
        )
        async with grpc.aio.secure_channel(address, rogue) as channel:
            assert await generate(channel, mesh.metadata()) == "UNAVAILABLE"
    assert "internal: service token, mTLS" in read_log()


async def test_without_a_token_the_service_warns_once_that_it_is_open(tmp_path: Path) -> None:
    async with (
        answer_process(tmp_path) as (address, read_log),
        grpc.aio.insecure_channel(address) as channel,
    ):
        assert await generate(channel) == "OK"
    assert read_log().count("open to anyone who can reach the port") == 1


def test_a_token_too_short_to_be_safe_stops_the_service_at_start(tmp_path: Path) -> None:
    weak = "short-token"
    result = subprocess.run(
        [sys.executable, "-m", "locus.answer"],
        env=service_environment(
            tmp_path, LOCUS_ANSWER_GRPC_PORT=str(free_port()), LOCUS_SERVICE_TOKEN=weak
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    assert "at least 16" in output
    assert "token_urlsafe" in output
    assert weak not in output
