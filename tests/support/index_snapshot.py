"""What a user can see of one project's indexes, read through the public RPCs of a running stack
in a form two projects of the same tree can be compared by (paths and names, never the project's
own ids): files, symbols, file dependencies, BM25 chunk hits, whole-file hits, vector hits and
graph edges. Shared by the supervision e2e test and `make reliability`'s chaos runs. The
internal services are called with the stack's service token (mesh_access)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import grpc
from mesh_access import internal_channel

from locus.rpc.bearer import with_bearer
from locus.v1 import (
    ast_pb2,
    ast_pb2_grpc,
    common_pb2,
    gateway_pb2_grpc,
    impact_pb2,
    impact_pb2_grpc,
    ingestion_pb2,
    ingestion_pb2_grpc,
    retrieval_pb2,
)

QUERIES = (
    "dead letter subject for malformed events",
    "retry limit for uploads",
    "reciprocal rank fusion of lexical and vector lists",
    "parse the page token",
    "graph of callers and dependents",
)
INDEXES = ("files", "symbols", "dependencies", "bm25 hits", "whole-file hits", "vector hits")
SCORED = ("bm25 hits", "whole-file hits", "vector hits")  # entries (query, ..., score)
GRAPH = "graph edges"
COMPARED_HITS = 50  # each query's hits compared: its top 50 of the FETCHED_HITS read
FETCHED_HITS = 100
CALL_SECONDS = 60
SYMBOL_BATCH = 100  # ListFileSymbols' most files per call
IMPACT_SEEDS = 50  # Compute's most seeds walked one by one (each_seed)

Snapshot = dict[str, list[Any]]


def comparable(entries: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A list of (..., score) hits as a sorted multiset, without the lowest-scoring tie group:
    equal scores come in index order (which a rewrite after a crash may change) and a top-k cut
    can split the last tie group differently; every entry above it must match exactly."""
    if not entries:
        return []
    lowest = min(entry[-1] for entry in entries)
    return sorted(entry for entry in entries if entry[-1] > lowest)


def index_snapshot(
    addresses: Mapping[str, str],
    project: str,
    *,
    queries: Sequence[str] = QUERIES,
    vectors: bool = False,
    graph: bool = True,
    service_token: str = "",
    api_key: str = "",
) -> Snapshot:
    """The project's indexes (``addresses``: service name → host:port, as in stack.json).
    ``vectors``: also vector-search hits (only meaningful once the scan is embedded);
    ``graph``: also the impact graph around each file (one Compute per 50 files);
    ``service_token``: the stack's (``mesh_access.service_token_of``), for the internal calls;
    ``api_key``: a key that may read the project (``mesh_access.admin_key_of``), for the
    gateway's."""
    with with_bearer(grpc.insecure_channel(addresses["gateway"]), api_key) as gateway_channel:
        gateway = gateway_pb2_grpc.GatewayStub(gateway_channel)
        project_id = gateway.GetProject(
            ingestion_pb2.GetProjectRequest(project_id=project), timeout=CALL_SECONDS
        ).project_id
        with internal_channel(addresses["ingestion"], service_token) as channel:
            files = list(_files(ingestion_pb2_grpc.IngestionServiceStub(channel), project_id))
        path_of = {file.file_id: file.relative_path for file in files}
        snapshot: Snapshot = {
            "files": sorted((f.relative_path, f.sha256, f.language, f.size_bytes) for f in files)
        }
        with internal_channel(addresses["ast"], service_token) as channel:
            ast = ast_pb2_grpc.AstServiceStub(channel)
            symbols = list(_symbols(ast, project_id, list(path_of)))
            snapshot["symbols"] = sorted(
                (
                    s.location.relative_path,
                    s.qualified_name,
                    s.kind,
                    s.location.start_line,
                    s.location.end_line,
                )
                for s in symbols
            )
            snapshot["dependencies"] = sorted(_dependencies(ast, project_id, path_of))
        snapshot |= _searches(gateway, project_id, queries, vectors)
    if graph:
        name_of = {s.node_id: (s.location.relative_path, s.qualified_name) for s in symbols}
        with internal_channel(addresses["impact"], service_token) as channel:
            impact = impact_pb2_grpc.ImpactServiceStub(channel)
            snapshot[GRAPH] = sorted(_graph(impact, project_id, path_of, name_of))
    return snapshot


def differences(
    got: Snapshot, wanted: Snapshot, *, shown: int = 3, score_tolerance: float = 0.0
) -> dict[str, str]:
    """Per index of ``wanted``: "" when ``got`` has exactly the same entries, else a short
    account of what differs (sizes and the first entries only one side has).

    ``score_tolerance`` (a relative difference) compares the scored hits loosely: each side's
    top COMPARED_HITS hits of a query must be among the other side's FETCHED_HITS, with scores
    within the tolerance. BM25 statistics count a rewritten document's deleted copy until its
    segment is merged (tantivy and Lucene alike), so a project whose documents a crash made
    the indexer write twice scores every hit slightly differently from a clean scan, while
    holding exactly the same documents."""
    found = {}
    for index, entries in wanted.items():
        other = got.get(index, [])
        if other == entries or (
            score_tolerance and index in SCORED and _close(other, entries, score_tolerance)
        ):
            found[index] = ""
            continue
        only_got = sorted(set(other) - set(entries))
        only_wanted = sorted(set(entries) - set(other))
        found[index] = (
            f"{len(other)} vs {len(entries)} entries; only in the first: "
            f"{only_got[:shown]}{' …' if len(only_got) > shown else ''}; only in the second: "
            f"{only_wanted[:shown]}{' …' if len(only_wanted) > shown else ''}"
        )
    return found


def _close(got: list[Any], wanted: list[Any], tolerance: float) -> bool:
    """Whether each side's top hits of every query are the other's, scored within
    ``tolerance`` (relative)."""

    def by_query(entries: list[Any]) -> dict[Any, dict[tuple[Any, ...], float]]:
        queries: dict[Any, dict[tuple[Any, ...], float]] = {}
        for entry in entries:
            queries.setdefault(entry[0], {})[tuple(entry[:-1])] = entry[-1]
        return queries

    def covered(one: dict[tuple[Any, ...], float], other: dict[tuple[Any, ...], float]) -> bool:
        top = sorted(one.items(), key=lambda item: -item[1])[:COMPARED_HITS]
        return all(
            hit in other and abs(other[hit] - score) <= tolerance * max(abs(score), 1e-9)
            for hit, score in top
        )

    mine, theirs = by_query(got), by_query(wanted)
    return mine.keys() == theirs.keys() and all(
        covered(mine[q], theirs[q]) and covered(theirs[q], mine[q]) for q in mine
    )


def _files(
    ingestion: ingestion_pb2_grpc.IngestionServiceStub, project_id: str
) -> Iterator[ingestion_pb2.FileRecord]:
    token = ""
    while True:
        page = ingestion.ListFiles(
            ingestion_pb2.ListFilesRequest(
                project_id=project_id,
                page=common_pb2.PageRequest(page_size=500, page_token=token),
            ),
            timeout=CALL_SECONDS,
        )
        yield from page.files
        token = page.next_page_token
        if not token:
            return


def _symbols(
    ast: ast_pb2_grpc.AstServiceStub, project_id: str, file_ids: list[str]
) -> Iterator[common_pb2.Symbol]:
    for start in range(0, len(file_ids), SYMBOL_BATCH):
        listed = ast.ListFileSymbols(
            ast_pb2.ListFileSymbolsRequest(
                project_id=project_id, file_ids=file_ids[start : start + SYMBOL_BATCH]
            ),
            timeout=CALL_SECONDS,
        )
        for file in listed.files:
            yield from file.symbols


def _dependencies(
    ast: ast_pb2_grpc.AstServiceStub, project_id: str, path_of: Mapping[str, str]
) -> Iterator[tuple[str, str, str, int]]:
    for file_id, path in path_of.items():
        outline = ast.GetFileOutline(
            ast_pb2.GetFileOutlineRequest(project_id=project_id, file_id=file_id),
            timeout=CALL_SECONDS,
        )
        for dependency in outline.dependencies:
            target = path_of.get(dependency.target_file_id, "")
            yield path, dependency.target_module, target, dependency.line


def _searches(
    gateway: gateway_pb2_grpc.GatewayStub, project_id: str, queries: Sequence[str], vectors: bool
) -> Snapshot:
    found: Snapshot = {"bm25 hits": [], "whole-file hits": []}
    if vectors:
        found["vector hits"] = []
    for query in queries:
        response = gateway.Search(
            retrieval_pb2.SearchRequest(
                query=query,
                mode=retrieval_pb2.SEARCH_MODE_BM25,
                filters=retrieval_pb2.SearchFilters(project_id=project_id),
                top_k=FETCHED_HITS,
                top_whole_files=FETCHED_HITS,
            ),
            timeout=CALL_SECONDS,
        )
        found["bm25 hits"] += [
            (query, *hit)
            for hit in comparable([_chunk_hit(h, round(h.lexical_score, 4)) for h in response.hits])
        ]
        whole_files = [(f.relative_path, round(f.score, 4)) for f in response.whole_files]
        found["whole-file hits"] += [(query, *hit) for hit in comparable(whole_files)]
        if vectors:
            response = gateway.Search(
                retrieval_pb2.SearchRequest(
                    query=query,
                    mode=retrieval_pb2.SEARCH_MODE_VECTOR,
                    filters=retrieval_pb2.SearchFilters(project_id=project_id),
                    top_k=FETCHED_HITS,
                ),
                timeout=CALL_SECONDS,
            )
            found["vector hits"] += [
                (query, *hit)
                for hit in comparable(
                    [_chunk_hit(h, round(h.vector_score, 3)) for h in response.hits]
                )
            ]
    return found


def _chunk_hit(hit: retrieval_pb2.SearchHit, score: float) -> tuple[str, int, int, str, float]:
    location = hit.chunk.location
    return (
        location.relative_path,
        location.start_line,
        location.end_line,
        hit.chunk.symbol_qualified_name,
        score,
    )


def _graph(
    impact: impact_pb2_grpc.ImpactServiceStub,
    project_id: str,
    path_of: Mapping[str, str],
    name_of: Mapping[str, tuple[str, str]],
) -> Iterator[tuple[str, str, str, int]]:
    """Each file's one-hop neighbourhood in the impact graph: (seed file, "file"/"symbol",
    what it reaches, distance)."""
    file_ids = sorted(path_of)
    for start in range(0, len(file_ids), IMPACT_SEEDS):
        response = impact.Compute(
            impact_pb2.ComputeImpactRequest(
                project_id=project_id,
                seed_file_ids=file_ids[start : start + IMPACT_SEEDS],
                depth=1,
                limit=1000,
                each_seed=True,
            ),
            timeout=CALL_SECONDS,
        )
        for seed in response.each_seed:
            origin = path_of.get(seed.seed_file_id, seed.seed_file_id)
            for file in seed.files:
                yield origin, "file", file.relative_path, file.distance
            for symbol in seed.symbols:
                reached = name_of.get(symbol.symbol.node_id)
                label = "/".join(reached) if reached else symbol.symbol.qualified_name
                yield origin, "symbol", label, symbol.distance
