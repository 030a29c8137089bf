"""The gRPC runtime on real loopback servers: health gating, request IDs, typed errors,
default deadlines and one trace across client and server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from locus.rpc import MeshCredentials, NotFound, RpcServer, make_channel
from locus.telemetry import Telemetry, setup_telemetry, with_request_id
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

pytestmark = pytest.mark.integration


class ProjectsForTest(ingestion_pb2_grpc.IngestionServiceServicer):
    """Just enough of a servicer to exercise the runtime around it."""

    async def GetProject(
        self, request: ingestion_pb2.GetProjectRequest, context: grpc.aio.ServicerContext
    ) -> ingestion_pb2.Project:
        if request.project_id == "missing":
            raise NotFound("no project 'missing'; create it first")
        if request.project_id == "crash":
            raise RuntimeError("secret internal detail")
        if request.project_id.startswith("echo"):
            raise NotFound(
                f"no project {request.project_id!r} at nats://svc:hunter2@nats.internal:4222 "
                "(?token=abc123)"
            )
        if request.project_id == "slow":
            await asyncio.sleep(2)
        return ingestion_pb2.Project(project_id=request.project_id, name="demo")


@pytest.fixture
def telemetry(span_exporter: InMemorySpanExporter) -> Telemetry:
    return setup_telemetry("rpc-test", exporters=[span_exporter], from_environment=False)


@pytest.fixture
async def server(telemetry: Telemetry) -> AsyncIterator[RpcServer]:
    rpc = RpcServer("127.0.0.1:0", telemetry, mesh=MeshCredentials(), grace_seconds=1)
    rpc.add_service(
        ingestion_pb2_grpc.add_IngestionServiceServicer_to_server,
        ProjectsForTest(),
        "locus.v1.IngestionService",
    )
    await rpc.start()
    yield rpc
    await rpc.stop()


async def health_status(address: str, service: str = "") -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=2
        )
        return int(reply.status)


async def test_health_is_not_serving_until_marked_ready(server: RpcServer) -> None:
    assert await health_status(server.address) == health_pb2.HealthCheckResponse.NOT_SERVING
    await server.mark_serving()
    assert await health_status(server.address) == health_pb2.HealthCheckResponse.SERVING
    assert (
        await health_status(server.address, "locus.v1.IngestionService")
        == health_pb2.HealthCheckResponse.SERVING
    )


async def test_typed_error_keeps_code_and_message(server: RpcServer, telemetry: Telemetry) -> None:
    async with make_channel(server.address, telemetry) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="missing"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert caught.value.details() == "no project 'missing'; create it first"


async def test_unexpected_error_is_internal_without_leaking_details(
    server: RpcServer, telemetry: Telemetry
) -> None:
    async with make_channel(server.address, telemetry) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="crash"))
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert "secret" not in (caught.value.details() or "")


async def raw_call(address: str, payload: bytes) -> grpc.aio.AioRpcError:
    """GetProject with ``payload`` as its request bytes, whatever they are."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(
            "/locus.v1.IngestionService/GetProject",
            request_serializer=lambda raw: raw,
            response_deserializer=lambda raw: raw,
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(payload, timeout=5)
    return caught.value


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"\xff\xff\xff\xff\x0f", id="truncated varint"),
        pytest.param(b"\x0a\x05ab", id="string longer than the message"),
        pytest.param(b"\x0a\x02\xc3\x28", id="invalid UTF-8 in a string field"),
        pytest.param(bytes(range(256)) * 4, id="random bytes"),
    ],
)
async def test_bytes_that_are_not_a_request_message_are_invalid_argument(
    server: RpcServer, payload: bytes
) -> None:
    error = await raw_call(server.address, payload)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a valid GetProjectRequest message" in (error.details() or "")


async def test_error_messages_are_bounded_and_carry_no_credentials(
    server: RpcServer, telemetry: Telemetry
) -> None:
    async with make_channel(server.address, telemetry) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            # 20,000 characters echoed back: without a bound, the trailer overflows and the
            # caller gets RESOURCE_EXHAUSTED instead of the real status.
            await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="echo" + "x" * 20_000))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    details = caught.value.details() or ""
    assert len(details) < 2_200
    assert "more characters not shown" in details
    caught_full = await _echo_with_short_name(server, telemetry)
    assert "hunter2" not in caught_full
    assert "abc123" not in caught_full
    assert "nats://***@nats.internal:4222" in caught_full


async def _echo_with_short_name(server: RpcServer, telemetry: Telemetry) -> str:
    async with make_channel(server.address, telemetry) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="echo"))
    return caught.value.details() or ""


async def test_every_call_gets_the_channel_default_deadline(
    server: RpcServer, telemetry: Telemetry
) -> None:
    async with make_channel(server.address, telemetry, default_timeout=0.3) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="slow"))
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_request_id_is_echoed_or_issued(server: RpcServer, telemetry: Telemetry) -> None:
    async with make_channel(server.address, telemetry) as channel:
        stub = ingestion_pb2_grpc.IngestionServiceStub(channel)
        call = stub.GetProject(
            ingestion_pb2.GetProjectRequest(project_id="p"), metadata=(("x-request-id", "abc-1"),)
        )
        await call
        echoed = dict(await call.initial_metadata())["x-request-id"]
        call = stub.GetProject(ingestion_pb2.GetProjectRequest(project_id="p"))
        await call
        issued = dict(await call.initial_metadata())["x-request-id"]
        call = stub.GetProject(
            ingestion_pb2.GetProjectRequest(project_id="p"),
            metadata=(("x-request-id", "bad id with spaces"),),
        )
        await call
        replaced = dict(await call.initial_metadata())["x-request-id"]
    assert echoed == "abc-1"
    assert len(issued) == 32
    assert replaced != "bad id with spaces"


async def test_one_trace_spans_client_and_server_with_the_request_id(
    server: RpcServer, telemetry: Telemetry, span_exporter: InMemorySpanExporter
) -> None:
    tracer = telemetry.tracer("test")
    with with_request_id("trace-me"), tracer.start_as_current_span("caller") as root:
        async with make_channel(server.address, telemetry) as channel:
            await ingestion_pb2_grpc.IngestionServiceStub(channel).GetProject(
                ingestion_pb2.GetProjectRequest(project_id="p")
            )
    spans = [s for s in span_exporter.get_finished_spans() if "GetProject" in s.name]
    kinds = {s.kind.name for s in spans}
    assert kinds == {"CLIENT", "SERVER"}
    assert {s.context.trace_id for s in spans} == {root.get_span_context().trace_id}
    assert all(s.attributes.get("locus.request_id") == "trace-me" for s in spans)
