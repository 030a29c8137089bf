"""The change history of a project's files, as ScoreFileHistory serves it: how often and how lately
each file changed in the project's git sources, and how well its commits' messages match a
question. Histories are read in the background after each scan and at start-up, so a question
does not wait for git."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from locus.ingestion.adapters.git_history import GitHistoryReader
from locus.ingestion.adapters.store import IngestionStore
from locus.ingestion.adapters.tables import ProjectRow
from locus.ingestion.domain.change_history import FileChanges, merge_changes
from locus.ingestion.domain.errors import IngestionError, InvalidRequest
from locus.ingestion.domain.source_paths import resolve_source_root
from locus.ingestion.git_sources import GitSources
from locus.ingestion.settings import IngestionSettings

log = logging.getLogger(__name__)

MAX_HISTORY_PATHS = 2000  # ScoreFileHistory: a ranking's candidate files, with room
MAX_HISTORY_QUESTION_CHARS = 250_000  # what Locate accepts


@dataclass(frozen=True)
class HistoryRoot:
    """A source's history: ``ref`` in the work tree ``path``, or in the bare repository
    ``path`` (``bare``)."""

    path: Path
    ref: str
    bare: bool


@dataclass(frozen=True)
class ProjectHistory:
    commits_read: int  # commits read over all the project's git sources (0: none is in git)
    files: dict[str, FileChanges]  # relative path → its history


class ProjectHistories:
    """Each project's change history, read from its sources' git repositories (cached by
    ``GitHistoryReader``); ``find_project`` resolves a project id or name."""

    def __init__(
        self,
        settings: IngestionSettings,
        store: IngestionStore,
        git_sources: GitSources,
        find_project: Callable[[str], Awaitable[ProjectRow]],
    ) -> None:
        self._settings = settings
        self._store = store
        self._git_sources = git_sources
        self._find_project = find_project
        self._history = GitHistoryReader(
            settings.history_max_commits,
            settings.history_timeout_seconds,
            settings.history_cached_roots,
            store_dir=settings.data_dir / "history",
        )
        self._warming: set[asyncio.Task[None]] = set()

    async def file_history(
        self, project_ref: str, question: str, paths: Sequence[str]
    ) -> ProjectHistory:
        """How often and how lately each of ``paths`` changed in the project's git sources, and
        how well its commits' messages match ``question`` (paths without history are left out)."""
        if len(paths) > MAX_HISTORY_PATHS:
            raise InvalidRequest(
                f"{len(paths)} paths; ask for the history of at most {MAX_HISTORY_PATHS} at once"
            )
        if len(question) > MAX_HISTORY_QUESTION_CHARS:
            raise InvalidRequest(
                f"question is {len(question)} characters long; "
                f"the limit is {MAX_HISTORY_QUESTION_CHARS}"
            )
        project = await self._find_project(project_ref)

        def scored(root: HistoryRoot) -> tuple[int, dict[str, FileChanges]]:
            history = self._history.read(root.path, ref=root.ref, bare=root.bare)
            if history is None:
                return 0, {}
            return history.commits, history.changes(question, paths)

        found = [
            await asyncio.to_thread(scored, root)
            for root in await self._history_roots(project.project_id)
        ]
        return ProjectHistory(
            commits_read=sum(commits for commits, _ in found),
            files=merge_changes(changes for _, changes in found),
        )

    async def _history_roots(self, project_id: str) -> list[HistoryRoot]:
        """Where each source's history is: a directory's work tree (its HEAD), a git source's
        mirror (the commit its last scan fetched, with the history fetched beside it); a
        documents source has none."""
        roots = []
        for source in await self._store.list_sources(project_id):
            if source.kind == "git":
                scanned = self._git_sources.scanned_history(source.source_id)
                if scanned is not None:
                    roots.append(HistoryRoot(*scanned, bare=True))
                continue
            if source.kind != "local_directory":
                continue
            try:
                path = resolve_source_root(source.path, self._settings.allowed_bases)
            except (IngestionError, OSError):
                continue  # a source that left the allowed bases has no history to give
            roots.append(HistoryRoot(path, "HEAD", bare=False))
        return roots

    def warm(self, project_id: str) -> None:
        """Read the scanned sources' histories in the background, so the first question
        after a scan does not wait for git."""
        self._in_background(self._read_histories([project_id]))

    async def _read_histories(self, project_ids: Sequence[str]) -> None:
        for project_id in project_ids:
            for root in await self._history_roots(project_id):
                await asyncio.to_thread(
                    partial(self._history.read, root.path, ref=root.ref, bare=root.bare)
                )

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._warming.add(task)
        task.add_done_callback(self._warming.discard)

    def warm_all(self) -> None:
        """At start-up: read the histories of scanned projects (as many roots as the cache
        keeps) in the background, so the first question after a restart does not wait for
        git either."""

        async def warm() -> None:
            try:
                projects = await self._store.list_projects(0, self._settings.history_cached_roots)
                await self._read_histories([p.project_id for p in projects if p.latest_snapshot_id])
            except Exception:  # a warm-up is an optimisation: a question reads it anyway
                log.exception("reading the change histories at start-up failed")

        self._in_background(warm())

    async def stop_warming(self) -> None:
        for task in list(self._warming):
            task.cancel()
        await asyncio.gather(*self._warming, return_exceptions=True)


class HistoryWarmup:
    """The start-up read of change histories, as a runtime component (after the store)."""

    def __init__(self, histories: ProjectHistories) -> None:
        self._histories = histories

    async def start(self) -> None:
        self._histories.warm_all()

    async def stop(self) -> None:
        await self._histories.stop_warming()
