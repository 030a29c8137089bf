"""ProjectCatalog adapters: the subsystem of a project, asked of ingestion (which owns
projects) once per project and cached; or a fixed mapping for tests and single-project runs."""

from __future__ import annotations

from collections.abc import Mapping

import grpc

from locus.rpc import MeshCredentials, make_channel
from locus.telemetry import Telemetry
from locus.v1 import ingestion_pb2, ingestion_pb2_grpc


class IngestionProjectCatalog:
    def __init__(
        self,
        ingestion_addr: str,
        telemetry: Telemetry | None,
        *,
        timeout_seconds: float = 10.0,
        mesh: MeshCredentials | None = None,
    ) -> None:
        self._target = ingestion_addr
        self._telemetry = telemetry
        self._timeout = timeout_seconds
        self._mesh = mesh
        self._channel: grpc.aio.Channel | None = None
        self._subsystems: dict[str, str] = {}

    async def open(self) -> None:
        self._channel = make_channel(
            self._target, self._telemetry, default_timeout=self._timeout, mesh=self._mesh
        )

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    async def subsystem_of(self, project_id: str) -> str:
        known = self._subsystems.get(project_id)
        if known is not None:
            return known
        if self._channel is None:
            raise RuntimeError("IngestionProjectCatalog is not open")
        stub = ingestion_pb2_grpc.IngestionServiceStub(self._channel)
        try:
            project = await stub.GetProject(ingestion_pb2.GetProjectRequest(project_id=project_id))
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return ""  # not cached: the project may be created later
            raise  # ingestion unreachable: the event is retried
        self._subsystems[project_id] = project.subsystem
        return str(project.subsystem)

    def forget(self, project_id: str) -> None:
        self._subsystems.pop(project_id, None)


class StaticProjectCatalog:
    def __init__(self, subsystems: Mapping[str, str] | None = None) -> None:
        self._subsystems = dict(subsystems or {})

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def subsystem_of(self, project_id: str) -> str:
        return self._subsystems.get(project_id, "")

    def forget(self, project_id: str) -> None:
        self._subsystems.pop(project_id, None)
