"""The ProjectDirectory of access control over ingestion's GetProject: a project by id or name,
None when ingestion knows none by that reference."""

from __future__ import annotations

import grpc

from locus.gateway.access_control import ProjectIdentity
from locus.gateway.adapters.peer_clients import DownstreamError, IngestionClient


class IngestionProjectDirectory:
    def __init__(self, ingestion: IngestionClient) -> None:
        self._ingestion = ingestion

    async def find(self, project_ref: str) -> ProjectIdentity | None:
        try:
            project = await self._ingestion.get_project(project_ref)
        except DownstreamError as error:
            if error.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                return None
            raise
        return ProjectIdentity(project.project_id, project.name)
