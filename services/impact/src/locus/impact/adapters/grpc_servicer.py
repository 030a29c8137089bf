"""ImpactService over gRPC: validates the query, walks the project's graph, maps the result.

Seeds that are not in the graph while others are: the answer covers the known ones and lists
the unknown ones in the trailing metadata ``locus-unknown-seed-node-ids`` /
``locus-unknown-seed-file-ids`` (comma-separated).
"""

from __future__ import annotations

import asyncio
import logging

import grpc

from locus.impact.adapters.graph_cache import ProjectGraphs
from locus.impact.adapters.messages import impacted_file_message, impacted_symbol_message
from locus.impact.domain import (
    InvalidImpactQuery,
    SeedsNotFound,
    compute_impact,
    validate_query,
)
from locus.rpc import InvalidArgument, NotFound
from locus.v1 import impact_pb2, impact_pb2_grpc

log = logging.getLogger(__name__)

UNKNOWN_NODES_METADATA = "locus-unknown-seed-node-ids"
UNKNOWN_FILES_METADATA = "locus-unknown-seed-file-ids"
_MAX_LISTED = 100


class ImpactServicer(impact_pb2_grpc.ImpactServiceServicer):
    def __init__(self, graphs: ProjectGraphs) -> None:
        self._graphs = graphs

    async def Compute(
        self, request: impact_pb2.ComputeImpactRequest, context: grpc.aio.ServicerContext
    ) -> impact_pb2.ComputeImpactResponse:
        try:
            query = validate_query(
                request.project_id,
                list(request.seed_node_ids),
                list(request.seed_file_ids),
                request.depth,
                request.stay_in_subsystem,
                request.limit,
            )
        except InvalidImpactQuery as error:
            raise InvalidArgument(str(error)) from error
        graph = await self._graphs.graph_for(query.project_id)
        if graph is None:
            raise NotFound(
                f"impact holds no files of project {query.project_id!r}: "
                "scan the project first (impact indexes what the ast service parses)"
            )
        try:
            result = await asyncio.to_thread(compute_impact, graph, query)
        except SeedsNotFound as error:
            raise NotFound(str(error)) from error
        trailers = []
        if result.unknown_seed_node_ids:
            trailers.append(
                (UNKNOWN_NODES_METADATA, ",".join(result.unknown_seed_node_ids[:_MAX_LISTED]))
            )
        if result.unknown_seed_file_ids:
            trailers.append(
                (UNKNOWN_FILES_METADATA, ",".join(result.unknown_seed_file_ids[:_MAX_LISTED]))
            )
        if trailers:
            log.info("ignored unknown seeds of project %s: %s", query.project_id, trailers)
            context.set_trailing_metadata(tuple(trailers))
        return impact_pb2.ComputeImpactResponse(
            symbols=[impacted_symbol_message(query.project_id, s) for s in result.symbols],
            files=[impacted_file_message(f) for f in result.files],
        )
