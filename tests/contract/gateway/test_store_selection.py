"""build() chooses the request store by URL alone: with LOCUS_GATEWAY_DATABASE_URL pointing at
PostgreSQL, the running gateway records its requests and keeps its API keys there (over real
gRPC and NATS)."""

from __future__ import annotations

import uuid
from pathlib import Path

import asyncpg
import grpc
import pytest
from required import unavailable

from locus.config import load_settings
from locus.gateway.main import build
from locus.gateway.settings import GatewaySettings
from locus.messaging import EmbeddedNatsServer
from locus.rpc.bearer import bearer_interceptors
from locus.v1 import gateway_pb2, gateway_pb2_grpc

pytestmark = [pytest.mark.contract, pytest.mark.postgres]


async def test_the_gateway_records_requests_in_postgresql(
    postgres_server, nats_server: EmbeddedNatsServer, tmp_path: Path, monkeypatch, unused_port
) -> None:
    admin = await asyncpg.connect(postgres_server.url())
    database = f"locus_gateway_{uuid.uuid4().hex[:12]}"
    try:
        await admin.execute(f'CREATE DATABASE "{database}"')
    except asyncpg.PostgresError as error:
        unavailable("PostgreSQL", f"cannot create a database on the server: {error}")
    finally:
        await admin.close()
    monkeypatch.setenv("LOCUS_GATEWAY_DATABASE_URL", postgres_server.url(database=database))
    monkeypatch.setenv("LOCUS_INGESTION_ADDR", f"127.0.0.1:{unused_port}")  # nothing there
    settings = load_settings(
        GatewaySettings,
        grpc_port=0,
        nats_url=nats_server.url,
        data_dir=tmp_path,
        admin_key_file=tmp_path / "admin.key",
    )
    runtime = build(settings)
    await runtime.start()
    admin_key = (tmp_path / "admin.key").read_text().strip()
    request_id = f"pg-{uuid.uuid4().hex[:8]}"
    try:
        async with grpc.aio.insecure_channel(
            runtime.address, interceptors=bearer_interceptors(admin_key)
        ) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await stub.Locate(
                    gateway_pb2.LocateRequest(project_id="shop", question="where?"),
                    metadata=(("x-request-id", request_id),),
                )
            assert error.value.code() == grpc.StatusCode.UNAVAILABLE
            record = await stub.GetRequest(gateway_pb2.GetRequestRequest(request_id=request_id))
            assert (record.kind, record.status) == ("locate", "failed")
    finally:
        await runtime.stop()

    connection = await asyncpg.connect(postgres_server.url(database=database))
    try:
        row = await connection.fetchrow(
            "SELECT status, error_code, error_message, principal FROM gateway_requests "
            "WHERE request_id = $1",
            request_id,
        )
        keys = [dict(k) for k in await connection.fetch("SELECT * FROM gateway_api_keys")]
    finally:
        await connection.close()
    assert row is not None
    assert (row["status"], row["error_code"]) == ("failed", "UNAVAILABLE")
    assert row["error_message"].startswith("ingestion service at 127.0.0.1:")
    key_id, secret = admin_key.removeprefix("lk_").split("_", 1)
    assert row["principal"] == f"key:{key_id}"
    assert [k["key_id"] for k in keys] == [key_id]
    assert secret not in str(keys)  # only its hash is stored
    assert not (tmp_path / "gateway.db").exists()
