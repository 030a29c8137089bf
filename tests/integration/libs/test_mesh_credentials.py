"""Internal hops need the mesh's credentials (docs/adr/0009), on real loopback gRPC servers: the
service token (UNAUTHENTICATED without it or with another; health open, reflection not), mTLS
(no certificate or one from another CA cannot complete a call), and the gateway's public server
that asks for neither."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from certificates import CertificateFiles, MeshCertificates, make_mesh_certificates
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.config import CredentialSettings
from locus.rpc import (
    SERVICE_TOKEN_HEADER,
    MeshCredentials,
    RpcServer,
    TlsMaterial,
    make_channel,
    wait_until_serving,
)
from locus.telemetry import Telemetry, setup_telemetry
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

pytestmark = pytest.mark.integration

TOKEN = "mesh-token-for-tests-0123456789abcdef"
OTHER_TOKEN = "another-deployments-token-9876543210"


class ProjectsForTest(ingestion_pb2_grpc.IngestionServiceServicer):
    async def GetProject(
        self, request: ingestion_pb2.GetProjectRequest, context: grpc.aio.ServicerContext
    ) -> ingestion_pb2.Project:
        return ingestion_pb2.Project(project_id=request.project_id, name="demo")


@pytest.fixture
def telemetry() -> Telemetry:
    return setup_telemetry("mesh-test", from_environment=False)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> MeshCertificates:
    return make_mesh_certificates(tmp_path_factory.mktemp("certificates"))


def tls_of(files: CertificateFiles) -> TlsMaterial:
    return TlsMaterial.from_files(files.cert_file, files.key_file, files.ca_file)


async def serving(
    telemetry: Telemetry, *, mesh: MeshCredentials | None, public_tls: TlsMaterial | None = None
) -> RpcServer:
    server = RpcServer("127.0.0.1:0", telemetry, mesh=mesh, public_tls=public_tls, grace_seconds=1)
    server.add_service(
        ingestion_pb2_grpc.add_IngestionServiceServicer_to_server,
        ProjectsForTest(),
        "locus.v1.IngestionService",
    )
    await server.start()
    await server.mark_serving()
    return server


@pytest.fixture
async def token_server(telemetry: Telemetry) -> AsyncIterator[RpcServer]:
    server = await serving(telemetry, mesh=MeshCredentials(TOKEN))
    yield server
    await server.stop()


async def get_project(channel: grpc.aio.Channel, **call: object) -> ingestion_pb2.Project:
    stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
    reply: ingestion_pb2.Project = await stub.GetProject(
        ingestion_pb2.GetProjectRequest(project_id="p"), timeout=5, **call
    )
    return reply


async def test_a_call_without_the_token_is_unauthenticated_and_says_what_to_do(
    token_server: RpcServer, telemetry: Telemetry
) -> None:
    async with make_channel(token_server.address, telemetry) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await get_project(channel)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    details = caught.value.details() or ""
    assert "internal Locus service" in details
    assert SERVICE_TOKEN_HEADER in details
    assert "LOCUS_SERVICE_TOKEN" in details
    assert "carried none" in details


async def test_a_call_with_another_token_is_unauthenticated_without_echoing_either(
    token_server: RpcServer, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with make_channel(
        token_server.address, telemetry, mesh=MeshCredentials(OTHER_TOKEN)
    ) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await get_project(channel)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    details = caught.value.details() or ""
    assert "is not this deployment's" in details
    assert TOKEN not in details
    assert OTHER_TOKEN not in details
    assert "refused /locus.v1.IngestionService/GetProject" in caplog.text
    assert TOKEN not in caplog.text
    assert OTHER_TOKEN not in caplog.text


async def test_a_channel_with_the_token_is_served(
    token_server: RpcServer, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with make_channel(
        token_server.address, telemetry, mesh=MeshCredentials(TOKEN)
    ) as channel:
        assert (await get_project(channel)).name == "demo"
    # The header set by hand works as well (what a script or a sidecar would send).
    async with grpc.aio.insecure_channel(token_server.address) as channel:
        reply = await get_project(channel, metadata=((SERVICE_TOKEN_HEADER, TOKEN),))
        assert reply.name == "demo"
    assert TOKEN not in caplog.text


async def test_no_span_carries_the_token(span_exporter: InMemorySpanExporter) -> None:
    traced = setup_telemetry("mesh-test", exporters=[span_exporter], from_environment=False)
    server = await serving(traced, mesh=MeshCredentials(TOKEN))
    try:
        async with make_channel(server.address, traced, mesh=MeshCredentials(TOKEN)) as channel:
            await get_project(channel)
        async with make_channel(server.address, traced, mesh=MeshCredentials(OTHER_TOKEN)) as bad:
            with pytest.raises(grpc.aio.AioRpcError):
                await get_project(bad)
    finally:
        await server.stop()
    spans = span_exporter.get_finished_spans()
    assert spans
    shown = " ".join(
        f"{span.name} {dict(span.attributes or {})} {[e.attributes for e in span.events]} "
        f"{span.status.description}"
        for span in spans
    )
    assert TOKEN not in shown
    assert OTHER_TOKEN not in shown


async def test_health_answers_without_the_token_and_reflection_needs_it(
    token_server: RpcServer,
) -> None:
    async with grpc.aio.insecure_channel(token_server.address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=5
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        await wait_until_serving(token_server.address, within_seconds=5)

        async def list_services(metadata: tuple[tuple[str, str], ...] = ()) -> list[str]:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            call = stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                metadata=metadata,
                timeout=5,
            )
            return [
                service.name
                async for response in call
                for service in response.list_services_response.service
            ]

        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await list_services()
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "locus.v1.IngestionService" in await list_services(((SERVICE_TOKEN_HEADER, TOKEN),))


async def test_an_internal_server_without_credentials_warns_that_it_is_open(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server = await serving(telemetry, mesh=MeshCredentials())
    try:
        async with make_channel(server.address, telemetry) as channel:
            assert (await get_project(channel)).name == "demo"
    finally:
        await server.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if "open to anyone" in w]) == 1
    assert any("LOCUS_SERVICE_TOKEN" in w for w in warnings)


async def test_the_public_server_asks_for_no_token(telemetry: Telemetry) -> None:
    server = await serving(telemetry, mesh=None)
    try:
        async with make_channel(server.address, telemetry) as channel:
            assert (await get_project(channel)).name == "demo"
    finally:
        await server.stop()


def test_credentials_read_from_settings_never_show_the_token(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN}\n")
    mesh = MeshCredentials.from_settings(CredentialSettings(service_token_file=token_file))
    assert mesh.metadata() == ((SERVICE_TOKEN_HEADER, TOKEN),)
    assert mesh.accepts(TOKEN)
    assert not mesh.accepts(OTHER_TOKEN)
    assert not mesh.accepts(None)
    assert TOKEN not in repr(mesh)
    assert TOKEN not in str(mesh)


# mTLS


@pytest.fixture
async def mtls_server(
    telemetry: Telemetry, certificates: MeshCertificates
) -> AsyncIterator[RpcServer]:
    server = await serving(telemetry, mesh=MeshCredentials(TOKEN, tls_of(certificates.service)))
    yield server
    await server.stop()


async def failed_call(channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await get_project(channel, metadata=((SERVICE_TOKEN_HEADER, TOKEN),))
    return caught.value


async def test_with_mtls_a_client_with_the_mesh_certificate_is_served(
    mtls_server: RpcServer, telemetry: Telemetry, certificates: MeshCertificates
) -> None:
    mesh = MeshCredentials(TOKEN, tls_of(certificates.service))
    await wait_until_serving(mtls_server.address, within_seconds=10, mesh=mesh)
    async with make_channel(mtls_server.address, telemetry, mesh=mesh) as channel:
        assert (await get_project(channel)).name == "demo"


async def test_with_mtls_a_plaintext_client_cannot_complete_a_call(
    mtls_server: RpcServer,
) -> None:
    async with grpc.aio.insecure_channel(mtls_server.address) as channel:
        error = await failed_call(channel)
    assert error.code() == grpc.StatusCode.UNAVAILABLE


async def test_with_mtls_a_client_without_a_certificate_cannot_complete_a_call(
    mtls_server: RpcServer, certificates: MeshCertificates
) -> None:
    trusting = grpc.ssl_channel_credentials(
        root_certificates=certificates.service.ca_file.read_bytes()
    )
    async with grpc.aio.secure_channel(mtls_server.address, trusting) as channel:
        error = await failed_call(channel)
    assert error.code() == grpc.StatusCode.UNAVAILABLE


async def test_with_mtls_a_certificate_of_another_ca_cannot_complete_a_call(
    mtls_server: RpcServer, certificates: MeshCertificates
) -> None:
    rogue = grpc.ssl_channel_credentials(
        root_certificates=certificates.service.ca_file.read_bytes(),  # trusts the server
        private_key=certificates.rogue.key_file.read_bytes(),
        certificate_chain=certificates.rogue.cert_file.read_bytes(),
    )
    async with grpc.aio.secure_channel(mtls_server.address, rogue) as channel:
        error = await failed_call(channel)
    assert error.code() == grpc.StatusCode.UNAVAILABLE


async def test_with_mtls_a_client_does_not_trust_a_server_of_another_ca(
    telemetry: Telemetry, certificates: MeshCertificates
) -> None:
    rogue_server = await serving(telemetry, mesh=MeshCredentials(TOKEN, tls_of(certificates.rogue)))
    try:
        mesh = MeshCredentials(TOKEN, tls_of(certificates.service))
        async with make_channel(rogue_server.address, telemetry, mesh=mesh) as channel:
            error = await failed_call(channel)
        assert error.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await rogue_server.stop()


async def test_the_public_server_serves_tls_without_asking_for_a_client_certificate(
    telemetry: Telemetry, certificates: MeshCertificates
) -> None:
    server = await serving(telemetry, mesh=None, public_tls=tls_of(certificates.service))
    try:
        trusting = grpc.ssl_channel_credentials(
            root_certificates=certificates.service.ca_file.read_bytes()
        )
        async with grpc.aio.secure_channel(server.address, trusting) as channel:
            assert (await get_project(channel)).name == "demo"
        async with grpc.aio.insecure_channel(server.address) as channel:
            assert (await failed_call(channel)).code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop()
