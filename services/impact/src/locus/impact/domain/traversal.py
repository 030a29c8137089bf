"""``compute_impact``: what else a change to some symbols or files touches, ranked.

The walk starts at the seeds and follows edges in both directions, up to ``depth`` hops. Each
hop multiplies the score by the weight of the edge as walked (how likely a change propagates
that way: a caller breaks when its callee changes, a callee rarely breaks when its caller does)
and, after the first hop, by ``DISTANCE_DECAY``. A symbol keeps the best-scoring path to it
(ties: the shorter one), which is its reason chain. Because every factor is below one, the best
path never visits a node twice.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, replace

from locus.impact.domain.errors import InvalidImpactQuery, SeedsNotFound
from locus.impact.domain.graph import DECLARATION_KINDS, CodeGraph
from locus.impact.domain.model import (
    ImpactedFile,
    ImpactedSymbol,
    ImpactQuery,
    ImpactResult,
    ImpactStep,
    RelationKind,
)

DEFAULT_DEPTH = 2
MAX_DEPTH = 5
DEFAULT_LIMIT = 50
MAX_LIMIT = 1000
MAX_EACH_SEEDS = 50  # seeds of one query walked one by one (each_seed)
DISTANCE_DECAY = 0.7
MIN_SCORE = 0.005

# (relation, walked in reverse) → how strongly a change propagates along that hop.
EDGE_WEIGHTS: dict[tuple[RelationKind, bool], float] = {
    ("calls", True): 1.0,  # called-by: the caller breaks first
    ("inherits", True): 0.95,  # inherited-by: subclasses inherit the change
    ("overrides", True): 0.95,  # overridden-by: implementations follow the declaration
    ("overrides", False): 0.9,  # the base method, whose callers may be dispatched here
    ("imports", True): 0.8,  # imported-by
    ("references", True): 0.7,  # referenced-by
    ("contains", True): 0.5,  # contained-in: the enclosing class or module changes too
    ("contains", False): 0.4,  # contains: members of a changed class
    ("inherits", False): 0.35,  # base classes a subclass relies on
    ("calls", False): 0.3,  # callees the changed code relies on
    ("references", False): 0.2,
    ("imports", False): 0.15,
}


def validate_query(
    project_id: str,
    seed_node_ids: list[str],
    seed_file_ids: list[str],
    depth: int,
    stay_in_subsystem: bool,
    limit: int,
    without_signatures: bool = False,
) -> ImpactQuery:
    if not project_id.strip():
        raise InvalidImpactQuery("project_id is required")
    nodes = tuple(dict.fromkeys(s for s in seed_node_ids if s))
    files = tuple(dict.fromkeys(s for s in seed_file_ids if s))
    if not nodes and not files:
        raise InvalidImpactQuery("give at least one seed in seed_node_ids or seed_file_ids")
    if depth < 0 or depth > MAX_DEPTH:
        raise InvalidImpactQuery(
            f"depth must be between 1 and {MAX_DEPTH} (0 means {DEFAULT_DEPTH}), got {depth}"
        )
    if limit < 0:
        raise InvalidImpactQuery(f"limit must not be negative (0 means {DEFAULT_LIMIT})")
    return ImpactQuery(
        project_id=project_id,
        seed_node_ids=nodes,
        seed_file_ids=files,
        depth=depth or DEFAULT_DEPTH,
        stay_in_subsystem=stay_in_subsystem,
        limit=min(limit or DEFAULT_LIMIT, MAX_LIMIT),
        without_signatures=without_signatures,
    )


@dataclass(frozen=True, slots=True)
class _Reach:
    score: float
    previous: str  # node id one hop closer to a seed
    step: ImpactStep


def compute_impact(graph: CodeGraph, query: ImpactQuery) -> ImpactResult:
    """Raises SeedsNotFound when no seed is in the graph; unknown seeds among known ones are
    listed in the result and otherwise ignored."""
    unknown_nodes = tuple(n for n in query.seed_node_ids if n not in graph.symbols)
    unknown_files = tuple(f for f in query.seed_file_ids if f not in graph.files)
    seeds: dict[str, None] = {n: None for n in query.seed_node_ids if n in graph.symbols}
    for file_id in query.seed_file_ids:
        for node_id in graph.symbols_by_file.get(file_id, ()):
            seeds[node_id] = None
    if not seeds and not _known_files(query, graph):
        raise SeedsNotFound(query.project_id, unknown_nodes, unknown_files)

    allowed = {graph.subsystem_of(n) for n in seeds} if query.stay_in_subsystem else None
    # layers[d][node]: the best way to reach node in exactly d hops
    layers: list[dict[str, _Reach]] = [{}]
    frontier: dict[str, float] = dict.fromkeys(sorted(seeds), 1.0)
    for distance in range(1, query.depth + 1):
        layer: dict[str, _Reach] = {}
        decay = DISTANCE_DECAY if distance > 1 else 1.0
        # Scores only fall along a path, so a path below what the limit already keeps in both
        # lists (symbols, files) can reach nothing that would be shown: it is not walked.
        floor = _floor(graph, layers, query.limit, set(query.seed_file_ids))
        for node_id, score in frontier.items():
            if score * decay < floor:
                continue
            for hop in graph.neighbours(node_id):
                if hop.node_id in seeds:
                    continue
                if query.without_signatures and (
                    hop.relation == "overrides"
                    or graph.symbols[hop.node_id].kind in DECLARATION_KINDS
                ):
                    continue
                if allowed is not None and graph.subsystem_of(hop.node_id) not in allowed:
                    continue
                reached = score * EDGE_WEIGHTS[(hop.relation, hop.reverse)] * decay
                if reached < MIN_SCORE or reached < floor:
                    continue
                current = layer.get(hop.node_id)
                if current is None or reached > current.score:
                    step = ImpactStep(hop.relation, hop.reverse, node_id, hop.node_id)
                    layer[hop.node_id] = _Reach(reached, node_id, step)
        layers.append(layer)
        frontier = {node_id: reach.score for node_id, reach in sorted(layer.items())}
        if not frontier:
            break

    best: dict[str, tuple[float, int]] = {}
    for distance, layer in enumerate(layers):
        for node_id, reach in layer.items():
            held = best.get(node_id)
            if held is None or reach.score > held[0]:
                best[node_id] = (reach.score, distance)

    # Only what the two lists show is ordered and gets its reason chain: the ``limit`` best
    # symbols, and each file's best symbol (a depth-2 walk on a large project reaches
    # thousands of symbols, and sorting them all was a third of the query).
    def rank(r: tuple[float, int, str]) -> tuple[float, int, str, str]:
        return (-r[0], r[1], graph.symbols[r[2]].qualified_name, r[2])

    found = [(round(score, 6), distance, node_id) for node_id, (score, distance) in best.items()]
    ordered = heapq.nsmallest(query.limit, found, key=rank)

    def impacted(score: float, distance: int, node_id: str) -> ImpactedSymbol:
        return ImpactedSymbol(
            symbol=graph.symbols[node_id],
            score=score,
            distance=distance,
            reason=_chain(layers, node_id, distance),
        )

    files = []
    for file_id, best_symbol in _rank_files(graph, found, rank, set(query.seed_file_ids))[
        : query.limit
    ]:
        item = impacted(*best_symbol)
        files.append(
            ImpactedFile(
                file=graph.files[file_id],
                score=item.score,
                distance=item.distance,
                reason=item.reason,
            )
        )
    return ImpactResult(
        symbols=tuple(impacted(*r) for r in ordered[: query.limit]),
        files=tuple(files),
        unknown_seed_node_ids=unknown_nodes,
        unknown_seed_file_ids=unknown_files,
    )


def _floor(
    graph: CodeGraph, layers: list[dict[str, _Reach]], limit: int, seed_file_ids: set[str]
) -> float:
    """The lowest score a new path may have and still change the result: the ``limit``-th best
    symbol score and the ``limit``-th best file score reached so far, whichever is lower (0
    while either list has fewer than ``limit`` entries)."""
    best: dict[str, float] = {}
    for layer in layers:
        for node_id, reach in layer.items():
            if reach.score > best.get(node_id, 0.0):
                best[node_id] = reach.score
    if len(best) < limit:
        return 0.0
    files: dict[str, float] = {}
    for node_id, score in best.items():
        file_id = graph.symbols[node_id].file_id
        if file_id not in seed_file_ids and file_id in graph.files:
            files[file_id] = max(score, files.get(file_id, 0.0))
    if len(files) < limit:
        return 0.0
    symbol_floor = sorted(best.values(), reverse=True)[limit - 1]
    file_floor = sorted(files.values(), reverse=True)[limit - 1]
    return min(symbol_floor, file_floor)


def _known_files(query: ImpactQuery, graph: CodeGraph) -> bool:
    return any(file_id in graph.files for file_id in query.seed_file_ids)


def _chain(layers: list[dict[str, _Reach]], node_id: str, distance: int) -> tuple[ImpactStep, ...]:
    steps: list[ImpactStep] = []
    current = node_id
    for d in range(distance, 0, -1):
        reach = layers[d][current]
        steps.append(reach.step)
        current = reach.previous
    return tuple(reversed(steps))


def _rank_files(
    graph: CodeGraph,
    reached: list[tuple[float, int, str]],
    rank: Callable[[tuple[float, int, str]], tuple[float, int, str, str]],
    seed_file_ids: set[str],
) -> list[tuple[str, tuple[float, int, str]]]:
    """A file is as impacted as its most impacted symbol (which gives it its reason chain):
    each file with the (score, distance, node id) of that symbol, most impacted first."""
    best: dict[str, tuple[tuple[float, int, str, str], tuple[float, int, str]]] = {}
    for item in reached:
        file_id = graph.symbols[item[2]].file_id
        if file_id not in seed_file_ids and file_id in graph.files:
            key = rank(item)
            held = best.get(file_id)
            if held is None or key < held[0]:
                best[file_id] = (key, item)
    files = [(file_id, item) for file_id, (_, item) in best.items()]
    files.sort(key=lambda f: (-f[1][0], f[1][1], graph.files[f[0]].relative_path))
    return files


@dataclass(frozen=True)
class SeedResult:
    seed_node_id: str  # one of the two
    seed_file_id: str
    result: ImpactResult


def compute_each_seed(graph: CodeGraph, query: ImpactQuery) -> list[SeedResult]:
    """``compute_impact`` from each seed alone, node seeds then file seeds: what one query per
    seed answers. Seeds not in the graph are left out; SeedsNotFound when none is."""
    results: list[SeedResult] = []
    for node_id in query.seed_node_ids:
        if node_id in graph.symbols:
            alone = replace(query, seed_node_ids=(node_id,), seed_file_ids=())
            results.append(SeedResult(node_id, "", compute_impact(graph, alone)))
    for file_id in query.seed_file_ids:
        if file_id in graph.files:
            alone = replace(query, seed_node_ids=(), seed_file_ids=(file_id,))
            results.append(SeedResult("", file_id, compute_impact(graph, alone)))
    if not results:
        raise SeedsNotFound(query.project_id, query.seed_node_ids, query.seed_file_ids)
    return results
