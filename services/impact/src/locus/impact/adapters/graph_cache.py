"""In-memory graphs of recently queried projects, rebuilt lazily: a query compares the
project's version in the store with the version its cached graph was built from, and rebuilds
(once, however many queries wait) when they differ. Works across replicas, since the version
lives in the shared store."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

from locus.impact.adapters.store import ImpactStore, ProjectSnapshot
from locus.impact.domain import CodeGraph, build_graph

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Cached:
    version: int
    graph: CodeGraph


def _build(snapshot: ProjectSnapshot) -> CodeGraph:
    return build_graph(snapshot.files, snapshot.symbols, snapshot.relations, snapshot.dependencies)


class ProjectGraphs:
    def __init__(self, store: ImpactStore, *, max_projects: int = 16) -> None:
        self._store = store
        self._max = max_projects
        self._graphs: OrderedDict[str, _Cached] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def graph_for(self, project_id: str) -> CodeGraph | None:
        """The project's current graph, or None when impact has never seen the project."""
        version = await self._store.project_version(project_id)
        if version is None:
            return None
        cached = self._fresh(project_id, version)
        if cached is not None:
            return cached
        lock = self._locks.setdefault(project_id, asyncio.Lock())
        async with lock:
            version = await self._store.project_version(project_id)
            if version is None:
                return None
            cached = self._fresh(project_id, version)
            if cached is not None:
                return cached
            started = time.perf_counter()
            snapshot = await self._store.load_project(project_id)
            if snapshot is None:
                return None
            graph = await asyncio.to_thread(_build, snapshot)
            self._remember(project_id, _Cached(snapshot.version, graph))
            log.info(
                "built graph of project %s v%d: %d symbols, %d edges, %d unresolved in %.0f ms",
                project_id,
                snapshot.version,
                len(graph.symbols),
                graph.edge_count,
                graph.unresolved_relations,
                (time.perf_counter() - started) * 1000,
            )
            return graph

    def _fresh(self, project_id: str, version: int) -> CodeGraph | None:
        cached = self._graphs.get(project_id)
        if cached is None or cached.version != version:
            return None
        self._graphs.move_to_end(project_id)
        return cached.graph

    def _remember(self, project_id: str, cached: _Cached) -> None:
        self._graphs[project_id] = cached
        self._graphs.move_to_end(project_id)
        while len(self._graphs) > self._max:
            evicted, _ = self._graphs.popitem(last=False)
            self._locks.pop(evicted, None)
