"""ImpactService over gRPC: validates the query, walks the project's graph, maps the result.

Seeds that are not in the graph while others are: the answer covers the known ones and lists
the unknown ones in the trailing metadata ``locus-unknown-seed-node-ids`` /
``locus-unknown-seed-file-ids`` (comma-separated, escaped to printable ASCII, at most 2,000
bytes).
"""

from __future__ import annotations

import asyncio
import logging

from locus.impact.adapters.graph_cache import ProjectGraphs
from locus.impact.adapters.messages import impacted_file_message, impacted_symbol_message
from locus.impact.domain import (
    MAX_EACH_SEEDS,
    InvalidImpactQuery,
    SeedsNotFound,
    compute_each_seed,
    compute_impact,
    validate_query,
)
from locus.rpc import InvalidArgument, NotFound, RpcContext
from locus.v1 import impact_pb2, impact_pb2_grpc

log = logging.getLogger(__name__)

UNKNOWN_NODES_METADATA = "locus-unknown-seed-node-ids"
UNKNOWN_FILES_METADATA = "locus-unknown-seed-file-ids"
_MAX_LISTED = 100
# A metadata value must be printable ASCII, and the headers of a whole call fit in 8 KiB: an id
# a caller made up (NUL bytes, 80,000 characters) failed the call as INTERNAL "Invalid metadata".
_MAX_TRAILER_BYTES = 2000
_ROOM_FOR_THE_REST = 32  # ",... (N more)"


class ImpactServicer(impact_pb2_grpc.ImpactServiceServicer):
    def __init__(self, graphs: ProjectGraphs) -> None:
        self._graphs = graphs

    async def Compute(
        self, request: impact_pb2.ComputeImpactRequest, context: RpcContext
    ) -> impact_pb2.ComputeImpactResponse:
        try:
            query = validate_query(
                request.project_id,
                list(request.seed_node_ids),
                list(request.seed_file_ids),
                request.depth,
                request.stay_in_subsystem,
                request.limit,
                request.without_signatures,
            )
        except InvalidImpactQuery as error:
            raise InvalidArgument(str(error)) from error
        seeds = len(query.seed_node_ids) + len(query.seed_file_ids)
        if request.each_seed and seeds > MAX_EACH_SEEDS:
            raise InvalidArgument(
                f"each_seed walks at most {MAX_EACH_SEEDS} seeds one by one, got {seeds}: "
                "split the request"
            )
        graph = await self._graphs.graph_for(query.project_id)
        if graph is None:
            raise NotFound(
                f"impact holds no files of project {query.project_id!r}: "
                "scan the project first (impact indexes what the ast service parses)"
            )
        try:
            if request.each_seed:
                each = await asyncio.to_thread(compute_each_seed, graph, query)
            else:
                result = await asyncio.to_thread(compute_impact, graph, query)
        except SeedsNotFound as error:
            raise NotFound(str(error)) from error
        if not request.each_seed:
            _report_unknown_seeds(
                context,
                query.project_id,
                result.unknown_seed_node_ids,
                result.unknown_seed_file_ids,
            )
            return impact_pb2.ComputeImpactResponse(
                symbols=[impacted_symbol_message(query.project_id, s) for s in result.symbols],
                files=[impacted_file_message(f) for f in result.files],
            )
        walked = {seed.seed_node_id or seed.seed_file_id for seed in each}
        _report_unknown_seeds(
            context,
            query.project_id,
            tuple(n for n in query.seed_node_ids if n not in walked),
            tuple(f for f in query.seed_file_ids if f not in walked),
        )
        return impact_pb2.ComputeImpactResponse(
            each_seed=[
                impact_pb2.SeedImpact(
                    seed_node_id=seed.seed_node_id,
                    seed_file_id=seed.seed_file_id,
                    symbols=[
                        impacted_symbol_message(query.project_id, s) for s in seed.result.symbols
                    ],
                    files=[impacted_file_message(f) for f in seed.result.files],
                )
                for seed in each
            ]
        )


def _report_unknown_seeds(
    context: RpcContext,
    project_id: str,
    node_ids: tuple[str, ...],
    file_ids: tuple[str, ...],
) -> None:
    trailers = []
    if node_ids:
        trailers.append((UNKNOWN_NODES_METADATA, listed_in_metadata(node_ids)))
    if file_ids:
        trailers.append((UNKNOWN_FILES_METADATA, listed_in_metadata(file_ids)))
    if trailers:
        log.info("ignored unknown seeds of project %s: %s", project_id, trailers)
        context.set_trailing_metadata(tuple(trailers))


def listed_in_metadata(ids: tuple[str, ...]) -> str:
    """The ids comma-separated as a valid metadata value: each escaped to printable ASCII
    (``\\x00``, ``\\u65e5``), as many as fit in _MAX_TRAILER_BYTES, then how many were left out."""
    kept: list[str] = []
    for raw in ids[:_MAX_LISTED]:
        escaped = raw.encode("unicode_escape").decode("ascii")
        if len(",".join([*kept, escaped])) > _MAX_TRAILER_BYTES - _ROOM_FOR_THE_REST:
            break
        kept.append(escaped)
    left_out = len(ids) - len(kept)
    return ",".join([*kept, f"... ({left_out} more)"] if left_out else kept)
