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
    """One query's (..., score) hits as a sorted multiset, without the lowest-scoring tie group:
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
    """Per index of ``wanted``: "" when ``got`` has the same entries, else a short account of
    what differs (sizes and the first entries only one side has, or the first hit out of the
    tolerance).

    Scored hits (SCORED) are compared per query without each query's lowest tie group
    (``comparable``). ``score_tolerance`` (a relative difference) compares them loosely instead:
    BM25 statistics count a rewritten document's deleted copy until its segment is merged
    (tantivy and Lucene alike), so a project whose documents a crash made the indexer write
    twice scores every hit slightly differently from a clean scan while holding exactly the
    same documents (``_close`` says what must still hold)."""
    found = {}
    for index, entries in wanted.items():
        other = got.get(index, [])
        if score_tolerance and index in SCORED:
            found[index] = _close(other, entries, score_tolerance)
            continue
        if index in SCORED:
            other, entries = _exact_form(other), _exact_form(entries)
        if other == entries:
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


def _by_query(entries: Sequence[tuple[Any, ...]]) -> dict[Any, dict[tuple[Any, ...], float]]:
    """(query, ..., score) entries as query → hit (query, ...) → score."""
    queries: dict[Any, dict[tuple[Any, ...], float]] = {}
    for entry in entries:
        queries.setdefault(entry[0], {})[tuple(entry[:-1])] = entry[-1]
    return queries


def _exact_form(entries: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [
        entry
        for query, hits in sorted(_by_query(entries).items())
        for entry in comparable([(*hit, score) for hit, score in hits.items()])
    ]


def _close(
    got: Sequence[tuple[Any, ...]], wanted: Sequence[tuple[Any, ...]], tolerance: float
) -> str:
    """An empty string when, for every query, both sides found the same hits scored within
    ``tolerance`` (relative), else the first thing that breaks it.

    The set of documents a query matches does not depend on the statistics, only their scores
    and order do. So a query both sides answered with fewer than FETCHED_HITS hits (nothing
    cut) must have found the same hits; and when both were cut at FETCHED_HITS, each side's top
    COMPARED_HITS must be in the other's list, unless the other side's cut could have dropped
    it: scored, within the tolerance, no higher than the other's lowest hit."""
    mine, theirs = _by_query(got), _by_query(wanted)
    if mine.keys() != theirs.keys():
        return f"queries {sorted(mine)} vs {sorted(theirs)}"
    for query in sorted(mine):
        one, other = mine[query], theirs[query]
        cut = len(one) >= FETCHED_HITS, len(other) >= FETCHED_HITS
        if cut == (False, False) and one.keys() != other.keys():
            only = sorted(one.keys() - other.keys())[:1] or sorted(other.keys() - one.keys())[:1]
            return f"{query!r}: {len(one)} vs {len(other)} hits; one side only: {only}"
        if cut[0] != cut[1]:
            return f"{query!r}: {len(one)} vs {len(other)} hits (one list cut, not the other)"
        for first, second, label in ((one, other, "first"), (other, one, "second")):
            lowest = min(second.values(), default=0.0)
            top = sorted(first.items(), key=lambda item: -item[1])[:COMPARED_HITS]
            for hit, score in top:
                if hit in second:
                    if abs(second[hit] - score) > tolerance * max(abs(score), 1e-9):
                        return f"{query!r}: {hit[1:]} scored {score} vs {second[hit]}"
                elif score > lowest * (1 + tolerance):
                    return f"{query!r}: {hit[1:]} (scored {score}) only in the {label}"
    return ""


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
                top_k_lexical=FETCHED_HITS,  # the lexical list is cut here first (default 50)
                top_whole_files=FETCHED_HITS,
            ),
            timeout=CALL_SECONDS,
        )
        found["bm25 hits"] += [
            (query, *_chunk_hit(hit, round(hit.lexical_score, 4))) for hit in response.hits
        ]
        found["whole-file hits"] += [
            (query, file.relative_path, round(file.score, 4)) for file in response.whole_files
        ]
        if vectors:
            response = gateway.Search(
                retrieval_pb2.SearchRequest(
                    query=query,
                    mode=retrieval_pb2.SEARCH_MODE_VECTOR,
                    filters=retrieval_pb2.SearchFilters(project_id=project_id),
                    top_k=FETCHED_HITS,
                    top_k_vector=FETCHED_HITS,
                ),
                timeout=CALL_SECONDS,
            )
            found["vector hits"] += [
                (query, *_chunk_hit(hit, round(hit.vector_score, 3))) for hit in response.hits
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
