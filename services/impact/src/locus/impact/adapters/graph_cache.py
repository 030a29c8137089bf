"""In-memory graphs of recently queried projects, kept warm.

A query compares the project's version in the store with the version its cached graph was
built from, and rebuilds (once, however many queries wait) when they differ; this works across
replicas, since the version lives in the shared store. So that queries rarely pay for a build:
- after files.parsed changes a project, its graph is rebuilt in the background once the
  changes pause (``rebuild_delay_seconds``);
- every built graph is also written to ``snapshot_dir`` (one pickle per project, written by this
  process only, replaced atomically), and at start-up the most recent ones are loaded back, so
  the first query after a restart finds its graph in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import tempfile
import time
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locus.impact.adapters.store import ImpactStore, ProjectSnapshot
from locus.impact.domain import CodeGraph, build_graph

log = logging.getLogger(__name__)

# Bumped whenever CodeGraph changes shape: a snapshot of another format is rebuilt, not loaded.
SNAPSHOT_FORMAT = 1


@dataclass(frozen=True)
class _Cached:
    version: int
    graph: CodeGraph


def _build(snapshot: ProjectSnapshot) -> CodeGraph:
    return build_graph(snapshot.files, snapshot.symbols, snapshot.relations, snapshot.dependencies)


class ProjectGraphs:
    def __init__(
        self,
        store: ImpactStore,
        *,
        max_projects: int = 16,
        snapshot_dir: Path | None = None,
        rebuild_delay_seconds: float = 2.0,
    ) -> None:
        self._store = store
        self._max = max_projects
        self._snapshots = snapshot_dir
        self._rebuild_delay = rebuild_delay_seconds
        self._graphs: OrderedDict[str, _Cached] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._rebuilds: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Load the most recently written graphs back (in the background)."""
        if self._snapshots is not None:
            self._snapshots.mkdir(parents=True, exist_ok=True)
            self._spawn(self._warm_from_snapshots())

    async def stop(self) -> None:
        for handle in self._rebuilds.values():
            handle.cancel()
        self._rebuilds.clear()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def project_changed(self, project_id: str) -> None:
        """files.parsed changed the project: rebuild its graph once the changes pause (a
        project just scanned is the one about to be asked about)."""
        pending = self._rebuilds.pop(project_id, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        self._rebuilds[project_id] = loop.call_later(
            self._rebuild_delay, self._rebuild_later, project_id
        )

    def forget(self, project_id: str) -> None:
        """The project was deleted: drop its graph, any pending rebuild and its snapshot."""
        pending = self._rebuilds.pop(project_id, None)
        if pending is not None:
            pending.cancel()
        self._graphs.pop(project_id, None)
        self._locks.pop(project_id, None)
        if self._snapshots is not None:
            self._snapshot_path(project_id).unlink(missing_ok=True)

    def _rebuild_later(self, project_id: str) -> None:
        self._rebuilds.pop(project_id, None)
        self._spawn(self._rebuild(project_id))

    async def _rebuild(self, project_id: str) -> None:
        try:
            await self.graph_for(project_id)
        except Exception:  # a query will try again
            log.exception("rebuilding the graph of %s failed", project_id)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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
            if self._snapshots is not None:
                self._spawn(self._save_snapshot(project_id, snapshot.version))
            return graph

    def cached_version(self, project_id: str) -> int | None:
        """The version of the project's graph in memory (None: not kept)."""
        cached = self._graphs.get(project_id)
        return cached.version if cached is not None else None

    async def stored_version(self, project_id: str) -> int | None:
        """The project's version in the store: the one a rebuild now reaches (None: unknown
        project)."""
        return await self._store.project_version(project_id)

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

    # snapshots on disk

    def _snapshot_path(self, project_id: str) -> Path:
        assert self._snapshots is not None
        return self._snapshots / f"{project_id}.graph.pickle"

    async def _save_snapshot(self, project_id: str, version: int) -> None:
        try:
            await asyncio.to_thread(self._write_snapshot, project_id, version)
        except Exception:  # the graph is still served; the next build writes again
            log.exception("could not write the graph snapshot of %s", project_id)

    def _write_snapshot(self, project_id: str, version: int) -> None:
        cached = self._graphs.get(project_id)
        if cached is None or cached.version != version:
            return  # superseded meanwhile: the newer build writes its own
        path = self._snapshot_path(project_id)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".partial")
        partial = Path(name)
        try:
            with os.fdopen(handle, "wb") as sink:
                pickle.dump(
                    (SNAPSHOT_FORMAT, version, cached.graph),
                    sink,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            partial.replace(path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    async def _warm_from_snapshots(self) -> None:
        assert self._snapshots is not None
        for leftover in self._snapshots.glob("*.partial"):  # a write cut by a crash
            leftover.unlink(missing_ok=True)
        paths = sorted(
            self._snapshots.glob("*.graph.pickle"), key=lambda p: p.stat().st_mtime, reverse=True
        )
        for path in reversed(paths[: self._max]):  # most recent last: it stays cached longest
            project_id = path.name.removesuffix(".graph.pickle")
            try:
                try:
                    version, graph = await asyncio.to_thread(_read_snapshot, path)
                except StaleSnapshot as stale:
                    log.info("%s; building the graph anew", stale)
                    path.unlink(missing_ok=True)
                    await self.graph_for(project_id)
                    continue
                current = await self._store.project_version(project_id)
                if current is None:
                    path.unlink(missing_ok=True)  # the project is gone from the store
                    continue
                if current == version and project_id not in self._graphs:
                    self._remember(project_id, _Cached(version, graph))
                    log.info("loaded the graph of %s v%d from %s", project_id, version, path)
                else:
                    await self.graph_for(project_id)  # changed while stopped: build anew
            except Exception:
                log.exception("could not warm the graph of %s from %s", project_id, path)


class StaleSnapshot(Exception):
    """A graph snapshot of another format: rebuilt from the store instead."""


def _read_snapshot(path: Path) -> tuple[int, CodeGraph]:
    # Written by this service into its own data directory only (never user input): that
    # directory must be as private as the store beside it.
    with path.open("rb") as source:
        loaded = pickle.load(source)
    if not isinstance(loaded, tuple) or len(loaded) != 3 or loaded[0] != SNAPSHOT_FORMAT:
        raise StaleSnapshot(f"{path} is not a format {SNAPSHOT_FORMAT} graph snapshot")
    _, version, graph = loaded
    if not isinstance(graph, CodeGraph):
        raise StaleSnapshot(f"{path} holds no graph")
    return int(version), graph
