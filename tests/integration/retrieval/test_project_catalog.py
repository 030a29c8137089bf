"""IngestionProjectCatalog against the real ingestion service: the subsystem retrieval stamps
on every chunk (for the ``subsystem`` search filter) comes from the project ingestion owns."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from locus.messaging import EmbeddedNatsServer
from locus.retrieval.adapters.project_catalog import IngestionProjectCatalog

pytestmark = pytest.mark.integration


async def test_subsystems_come_from_ingestion(
    nats_server: EmbeddedNatsServer, tmp_path: Path
) -> None:
    import locus.ingestion.main as ingestion_main
    from locus.ingestion.settings import IngestionSettings
    from locus.v1 import ingestion_pb2, ingestion_pb2_grpc

    runtime = ingestion_main.build(
        IngestionSettings(
            nats_url=nats_server.url,
            grpc_port=0,
            data_dir=tmp_path / "ingestion",
            allowed_bases=[tmp_path],
        )
    )
    await runtime.start()
    catalog = IngestionProjectCatalog(runtime.address, None, timeout_seconds=5)
    await catalog.open()
    try:
        async with grpc.aio.insecure_channel(runtime.address) as channel:
            project = await ingestion_pb2_grpc.IngestionServiceStub(channel).CreateProject(
                ingestion_pb2.CreateProjectRequest(
                    name="uploads", system="storage", subsystem="uploads-api"
                )
            )
        assert await catalog.subsystem_of(project.project_id) == "uploads-api"
        assert await catalog.subsystem_of(project.project_id) == "uploads-api"  # cached
        assert await catalog.subsystem_of("p_missing") == ""
    finally:
        await catalog.close()
        await runtime.stop()

    unreachable = IngestionProjectCatalog(runtime.address, None, timeout_seconds=1)
    await unreachable.open()
    with pytest.raises(grpc.aio.AioRpcError):  # retried by the bus, not indexed without it
        await unreachable.subsystem_of("p_other")
    await unreachable.close()
