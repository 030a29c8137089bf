"""Service layer of ingestion: projects and sources, scan jobs from request to completion (file
contents are read by ``file_reading``, change histories by ``history_reading``).

A scan runs in four steps, each safe to repeat after a crash or a redelivered event:
1. ``start_scan`` creates a QUEUED job with the project's next snapshot number and publishes
   ``scan.requested``.
2. ``run_scan`` (on ``scan.requested``) walks each source in a worker thread, stores contents
   by hash, diffs against the project's current files and, in one transaction, records the
   job's changes, moves the files to the new snapshot and sets the job to INDEXING.
3. It publishes the changes as ``files.changed`` batches with deterministic message IDs
   (``files.changed:<job>:<batch>``), so a republished batch is deduplicated by JetStream;
   each file carries its source root, detected from the source's current layout files.
4. ``record_index_update`` (on ``index.updated``) records each stage's per-file results and
   asks for a progress check (``ProgressChecks`` coalesces them). The check completes the job
   and publishes ``scan.completed`` (level SEARCHABLE) once every changed file is indexed by
   every required stage or reported failed, and publishes it again (level EMBEDDED) once every
   file's vectors are in as well (the embedding stages).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from locus.ingestion.adapters.blob_store import BlobNotFound, FileBlobStore, is_sha256
from locus.ingestion.adapters.git import tracked_paths
from locus.ingestion.adapters.proto_mapping import with_source_root
from locus.ingestion.adapters.store import (
    DeletedProject,
    IngestionStore,
    JobProgress,
    ScanResult,
)
from locus.ingestion.adapters.tables import (
    FileRow,
    JobCommitRow,
    JobRow,
    ProjectRow,
    SkippedFileRow,
    SourceRow,
)
from locus.ingestion.domain.changes import batched, compute_changes
from locus.ingestion.domain.errors import (
    IngestionError,
    InvalidRequest,
    JobNotFound,
    NoSources,
    ProjectNotFound,
    ScanInProgress,
    SourceNotFound,
)
from locus.ingestion.domain.git_sources import is_commit_id
from locus.ingestion.domain.model import ChangeType, FileChange, ScannedFile, SkippedFile
from locus.ingestion.domain.naming import validate_project_name
from locus.ingestion.domain.scanner import ReadCache, walk_source
from locus.ingestion.domain.source_paths import resolve_source_root
from locus.ingestion.domain.source_roots import (
    MAX_LAYOUT_FILE_BYTES,
    SourceRoots,
    detect_source_roots,
    layout_files_to_read,
    may_move_roots,
    rerooted_paths,
)
from locus.ingestion.git_sources import GitSources
from locus.ingestion.history_reading import ProjectHistories
from locus.ingestion.progress_checks import ProgressChecks
from locus.ingestion.settings import IngestionSettings
from locus.messaging import EventBus
from locus.telemetry import current_request_id
from locus.telemetry.metrics import SCAN_FILES, SCANS
from locus.v1 import common_pb2, events_pb2

log = logging.getLogger(__name__)

MAX_PATH_LENGTH = 4096
_CHANGE_TYPES = {
    ChangeType.ADDED: common_pb2.CHANGE_TYPE_ADDED,
    ChangeType.MODIFIED: common_pb2.CHANGE_TYPE_MODIFIED,
    ChangeType.DELETED: common_pb2.CHANGE_TYPE_DELETED,
}


def file_id_for(project_id: str, source_id: str, relative_path: str) -> str:
    digest = hashlib.sha256(f"{project_id}\0{source_id}\0{relative_path}".encode()).hexdigest()
    return "f_" + digest[:30]


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


@dataclass(frozen=True)
class _WalkedSource:
    current: dict[str, ScannedFile]  # relative path → file, contents stored, data dropped
    skipped: list[SkippedFile]
    bytes_read: int
    commit_sha: str = ""  # git sources: the commit walked


@dataclass(frozen=True)
class ProjectDeletion:
    """What DeleteProject removed from ingestion."""

    project_id: str
    name: str
    files: int
    sources: int


@dataclass(frozen=True)
class PushOutcome:
    """What NotifyPush did: the scan it started, or why none."""

    job: JobRow | None
    reason: str


class Ingestion:
    def __init__(
        self,
        settings: IngestionSettings,
        store: IngestionStore,
        blobs: FileBlobStore,
        bus: EventBus,
        git_sources: GitSources,
        histories: ProjectHistories,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._settings = settings
        self._store = store
        self._blobs = blobs
        self._bus = bus
        self._git_sources = git_sources
        self._histories = histories
        self._now = clock
        # Per source root: what the last walk read, so a rescan reads only changed files.
        self._read_caches: dict[str, ReadCache] = {}
        self.progress_checks = ProgressChecks(
            self.check_progress,
            self.jobs_to_check,
            interval_seconds=settings.progress_check_seconds,
            sweep_seconds=settings.progress_sweep_seconds,
        )

    def now(self) -> datetime:
        return self._now()

    # projects and sources

    async def create_project(self, name: str, subsystem_id: str | None) -> ProjectRow:
        """A new project, in the subsystem ``subsystem_id`` (resolved by the registry) or none."""
        row = ProjectRow(
            project_id=_new_id("p"),
            name=validate_project_name(name),
            subsystem_id=subsystem_id,
            created_at=self._now(),
            latest_snapshot_id="",
            last_snapshot_seq=0,
        )
        return await self._store.create_project(row)

    async def get_project(self, id_or_name: str) -> ProjectRow:
        id_or_name = id_or_name.strip()
        if not id_or_name:
            raise InvalidRequest("project_id must not be empty (give a project id or name)")
        if len(id_or_name) > 100:
            raise InvalidRequest("project_id is longer than 100 characters")
        project = await self._store.find_project(id_or_name)
        if project is None:
            raise ProjectNotFound(
                f"no project {id_or_name!r}; create it first (locus project create NAME)"
            )
        return project

    async def list_projects(self, offset: int, limit: int) -> list[ProjectRow]:
        return await self._store.list_projects(offset, limit)

    async def delete_project(self, project_ref: str) -> ProjectDeletion:
        """Delete the project and everything ingestion holds of it, then publish
        ``project.deleted`` (id ``project.deleted:<project_id>``) for the other services.
        Refused while a scan of the project runs (a stale one is failed first, as StartScan
        does): its events would bring the project's data back downstream."""
        project = await self.get_project(project_ref)
        active = await self._store.active_job(project.project_id)
        if active is not None:
            age = self._now() - _aware(active.updated_at)
            if age < timedelta(seconds=self._settings.stale_job_seconds):
                raise ScanInProgress(
                    f"scan {active.job_id} of {project.name!r} is still {active.state.lower()}; "
                    "wait for it (locus scan --wait) before deleting the project"
                )
        deleted = await self._store.delete_project(project.project_id)
        await asyncio.to_thread(self._forget_files, deleted)
        event = events_pb2.ProjectDeleted(
            project_id=project.project_id,
            name=project.name,
            request_id=current_request_id() or "",
        )
        event.deleted_at.FromDatetime(self._now())
        await self._bus.publish(
            self._bus.subjects.project_deleted,
            event,
            message_id=f"project.deleted:{project.project_id}",
        )
        log.info(
            "deleted project %s (%s): %d sources, %d files, %d snapshots",
            project.name,
            project.project_id,
            len(deleted.sources),
            deleted.files,
            len(deleted.unreferenced_hashes),
        )
        return ProjectDeletion(
            project_id=project.project_id,
            name=project.name,
            files=deleted.files,
            sources=len(deleted.sources),
        )

    def _forget_files(self, deleted: DeletedProject) -> None:
        """Snapshots no project refers to any more, git mirrors and read caches of the
        deleted sources (blocking file-system work: run in a worker thread)."""
        for sha256 in deleted.unreferenced_hashes:
            if is_sha256(sha256):
                self._blobs.delete(sha256)
        self._forget_sources(deleted.sources)

    def _forget_sources(self, sources: Sequence[SourceRow]) -> None:
        for source in sources:
            if source.kind == "git":
                self._git_sources.forget(source.source_id)
            elif source.kind == "local_directory":
                self._read_caches.pop(source.path, None)

    async def add_source(
        self,
        project_ref: str,
        path: str,
        git_url: str = "",
        git_ref: str = "",
        *,
        credential_file: str = "",
        credential_env: str = "",
        poll_seconds: int = 0,
    ) -> SourceRow:
        project = await self.get_project(project_ref)
        if git_url:
            if path:
                raise InvalidRequest("give a local 'path' or a 'git_url', not both")
            return await self._add_git_source(
                project, git_url, git_ref, credential_file, credential_env, poll_seconds
            )
        if git_ref or credential_file or credential_env or poll_seconds:
            raise InvalidRequest(
                "git_ref, credential_file, credential_env and poll_seconds belong to a git "
                "source: give its git_url"
            )
        if len(path) > MAX_PATH_LENGTH:
            raise InvalidRequest(f"path is longer than {MAX_PATH_LENGTH} characters")
        root = resolve_source_root(path, self._settings.allowed_bases)
        for existing in await self._store.list_sources(project.project_id):
            if existing.kind != "local_directory":
                continue
            other = Path(existing.path)
            if other != root and (other in root.parents or root in other.parents):
                inside = "inside" if other in root.parents else "around"
                raise InvalidRequest(
                    f"{root} is {inside} source {existing.source_id} ({other}) of project "
                    f"{project.name!r}: its files would be indexed twice; add a directory "
                    "that does not overlap the project's sources"
                )
        row = SourceRow(
            source_id=_new_id("src"),
            project_id=project.project_id,
            kind="local_directory",
            path=str(root),
            git_url="",
            git_ref="",
            created_at=self._now(),
        )
        return await self._store.add_source(row)

    async def _add_git_source(
        self,
        project: ProjectRow,
        git_url: str,
        git_ref: str,
        credential_file: str,
        credential_env: str,
        poll_seconds: int,
    ) -> SourceRow:
        source_id = _new_id("src")
        spec = await asyncio.to_thread(
            self._git_sources.check_new,
            source_id,
            git_url,
            git_ref,
            credential_file,
            credential_env,
            poll_seconds,
        )
        row = SourceRow(
            source_id=source_id,
            project_id=project.project_id,
            kind="git",
            path="",
            git_url=spec.url,
            git_ref=spec.ref,
            created_at=self._now(),
            credential_file=spec.credential_file,
            credential_env=spec.credential_env,
            poll_seconds=spec.poll_seconds,
            last_commit_sha="",
        )
        return await self._store.add_source(row)

    async def get_source(self, source_id: str) -> SourceRow:
        source_id = source_id.strip()
        if not source_id:
            raise InvalidRequest("source_id must name a source (see locus source list PROJECT)")
        if len(source_id) > 40:
            raise InvalidRequest("source_id is longer than 40 characters")
        source = await self._store.get_source(source_id)
        if source is None:
            raise SourceNotFound(f"no source {source_id!r}; see locus source list PROJECT")
        return source

    async def remove_source(self, source_id: str) -> tuple[SourceRow, JobRow]:
        """Remove a source and what it produced: mark it, then scan it, so that its walk finds
        nothing and every file of it is published as deleted (ast, retrieval and impact retract
        them as they do deleted files); once that scan recorded its changes the source, its
        mirror or read cache (and a documents source's documents) go. Refused while a scan of
        the project runs."""
        source = await self.get_source(source_id)
        project = await self.get_project(source.project_id)
        await self.refuse_while_scanning(project, "removing a source")
        await self._store.mark_source_removing(source.source_id)
        job = await self.start_scan(project.project_id, [source.source_id])
        return source, job

    async def _drop_removed_sources(self, project_id: str) -> None:
        """Sources marked for removal whose files are all retracted: their rows, documents,
        mirrors and read caches (idempotent: a redelivered scan finds them gone)."""
        dropped = await self._store.drop_removed_sources(project_id)
        for source in dropped:
            log.info("removed source %s of project %s", source.source_id, project_id)
        if dropped:
            await asyncio.to_thread(self._forget_sources, dropped)

    async def list_sources(self, project_ref: str) -> list[SourceRow]:
        project = await self.get_project(project_ref)
        return await self._store.list_sources(project.project_id)

    async def notify_push(self, project_ref: str, source_id: str, commit_sha: str) -> PushOutcome:
        """A push to a git source: scan it when its ref (or the pushed commit, when given)
        differs from the commit its last scan read."""
        project = await self.get_project(project_ref)
        source_id = source_id.strip()
        if not source_id:
            raise InvalidRequest("source_id must name a git source of the project")
        commit_sha = commit_sha.strip().lower()
        if commit_sha and not is_commit_id(commit_sha):
            raise InvalidRequest(f"sha {commit_sha!r} is not a commit id (7 to 64 hex digits)")
        source = await self._store.get_source(source_id)
        if source is None or source.project_id != project.project_id:
            raise InvalidRequest(f"project {project.name!r} has no source {source_id!r}")
        if source.kind != "git":
            what = "a local directory" if source.kind == "local_directory" else "documents"
            raise InvalidRequest(
                f"source {source_id} is {what}, not a git source; scan it with StartScan"
            )
        if not commit_sha:
            remote = await asyncio.to_thread(self._git_sources.remote_commit, source)
            commit_sha = remote or ""
        last = source.last_commit_sha
        if last and commit_sha and (last.startswith(commit_sha) or commit_sha.startswith(last)):
            return PushOutcome(None, f"commit {last} is scanned already")
        try:
            job = await self.start_scan(project.project_id, [source.source_id])
        except ScanInProgress as error:
            return PushOutcome(None, str(error))
        return PushOutcome(job, "")

    async def poll_source(self, source: SourceRow) -> None:
        """One polling check of a git source (GitPolling): scan it if its ref moved."""
        commit = await asyncio.to_thread(self._git_sources.remote_commit, source)
        if commit is None or commit == source.last_commit_sha:
            return
        try:
            job = await self.start_scan(source.project_id, [source.source_id])
        except ScanInProgress:
            return  # the next check after that scan sees the ref again
        log.info("git source %s moved to %s: scan %s", source.source_id, commit, job.job_id)

    async def polled_sources(self) -> list[SourceRow]:
        return await self._store.polled_sources()

    async def job_commits(self, job_id: str) -> list[JobCommitRow]:
        return await self._store.job_commits(job_id)

    # scans

    async def start_scan(self, project_ref: str, source_ids: Sequence[str]) -> JobRow:
        project = await self.get_project(project_ref)
        sources = await self._store.list_sources(project.project_id)
        if not sources:
            raise NoSources(
                f"project {project.name!r} has no source yet; add one (locus source add)"
            )
        unknown = set(source_ids) - {s.source_id for s in sources}
        if unknown:
            raise InvalidRequest(f"unknown source ids for {project.name!r}: {sorted(unknown)}")
        await self.refuse_while_scanning(project, "starting another")
        now = self._now()
        job = await self._store.create_job(
            JobRow(
                job_id=_new_id("job"),
                project_id=project.project_id,
                snapshot_id=_new_id("snap"),
                snapshot_seq=0,
                source_ids=",".join(source_ids),
                state="QUEUED",
                error="",
                request_id=current_request_id() or "",
                created_at=now,
                updated_at=now,
            )
        )
        event = events_pb2.ScanRequested(
            job_id=job.job_id,
            project_id=job.project_id,
            source_ids=list(source_ids),
            snapshot_id=job.snapshot_id,
            snapshot_seq=job.snapshot_seq,
            request_id=job.request_id,
        )
        event.requested_at.FromDatetime(now)
        await self._bus.publish(
            self._bus.subjects.scan_requested, event, message_id=f"scan.requested:{job.job_id}"
        )
        return job

    async def refuse_while_scanning(self, project: ProjectRow, doing: str) -> None:
        """ScanInProgress while a scan of the project runs; a stale one is failed instead."""
        active = await self._store.active_job(project.project_id)
        if active is None:
            return
        age = self._now() - _aware(active.updated_at)
        if age < timedelta(seconds=self._settings.stale_job_seconds):
            raise ScanInProgress(
                f"scan {active.job_id} of {project.name!r} is still {active.state.lower()}; "
                f"wait for it (locus scan --wait) before {doing}"
            )
        await self._store.set_job_state(
            active.job_id, "FAILED", self._now(), error="stale: no progress reported"
        )

    async def get_job(self, job_id: str) -> JobRow:
        if not job_id.strip():
            raise InvalidRequest("job_id must not be empty")
        job = await self._store.get_job(job_id.strip())
        if job is None:
            raise JobNotFound(f"no scan job {job_id!r}")
        return job

    async def job_progress(self, job: JobRow) -> JobProgress:
        return await self._store.progress(
            job.job_id, self._settings.required_stages, self._settings.embedding_stages
        )

    async def run_scan(self, event: events_pb2.ScanRequested) -> None:
        job = await self._store.get_job(event.job_id)
        if job is None:
            raise InvalidRequest(f"scan.requested for unknown job {event.job_id!r}")
        if job.state in ("COMPLETED", "FAILED"):
            return
        if job.state in ("QUEUED", "SCANNING"):
            await self._store.set_job_state(job.job_id, "SCANNING", self._now())
            try:
                await self._walk_and_record(job)
            except (IngestionError, OSError) as error:
                # The source vanished or left the allowed bases: retrying cannot help.
                await self._store.set_job_state(job.job_id, "FAILED", self._now(), error=str(error))
                await self._publish_completed(job, failed=True, error=str(error))
                return
        await self._drop_removed_sources(job.project_id)
        await self._publish_changes(job)
        await self._complete_if_done(job)
        self._histories.warm(job.project_id)

    async def fail_scan(self, job_id: str, reason: str) -> None:
        """The job's scan.requested was dead-lettered: nothing will run it, so it fails now with
        that reason (instead of staying SCANNING until it is stale, refusing new scans)."""
        job = await self._store.get_job(job_id)
        if job is None or job.state in ("COMPLETED", "FAILED"):
            return
        error = f"the scan request could not be processed: {reason}"
        await self._store.set_job_state(job.job_id, "FAILED", self._now(), error=error)
        await self._publish_completed(job, failed=True, error=error)

    async def _walk_and_record(self, job: JobRow) -> None:
        sources = await self._store.list_sources(job.project_id)
        wanted = set(filter(None, job.source_ids.split(",")))
        job_files: list[dict[str, object]] = []
        inserted: list[dict[str, object]] = []
        updated: list[dict[str, object]] = []
        deleted: list[str] = []
        skipped: list[dict[str, object]] = []
        stats = dict.fromkeys(
            (
                "files_seen",
                "files_skipped",
                "files_added",
                "files_modified",
                "files_deleted",
                "files_unchanged",
                "bytes_read",
            ),
            0,
        )
        commits: dict[str, tuple[str, str]] = {}
        for source in sources:
            if wanted and source.source_id not in wanted:
                continue
            if source.removing:
                walked = _WalkedSource({}, [], 0)  # RemoveSource: every file goes
            elif source.kind == "git":
                walked = await asyncio.to_thread(self._walk_git, source)
                commits[source.source_id] = (source.git_ref, walked.commit_sha)
            elif source.kind == "documents":
                walked = await self._walk_documents(job.project_id)
            else:
                root = resolve_source_root(source.path, self._settings.allowed_bases)
                walked = await asyncio.to_thread(self._walk, root)
            previous = await self._store.current_files(job.project_id, source.source_id)
            current = walked.current
            changes = compute_changes(
                {path: sha for path, (_, sha) in previous.items()},
                {path: f.sha256 for path, f in current.items()},
            )
            rerooted = await self._rerooted(previous, current, changes)
            if rerooted:
                log.info(
                    "scan %s: %d unchanged files of %s have a new source root",
                    job.job_id,
                    len(rerooted),
                    source.source_id,
                )
                changes = sorted([*changes, *rerooted], key=lambda c: c.path)
            stats["files_seen"] += len(current) + len(walked.skipped)
            stats["files_skipped"] += len(walked.skipped)
            stats["bytes_read"] += walked.bytes_read
            stats["files_unchanged"] += len(current) - sum(
                1 for c in changes if c.change_type != ChangeType.DELETED
            )
            for change in changes:
                file_id = file_id_for(job.project_id, source.source_id, change.path)
                scanned = current.get(change.path)
                record: dict[str, object] = {
                    "job_id": job.job_id,
                    "file_id": file_id,
                    "source_id": source.source_id,
                    "relative_path": change.path,
                    "change_type": change.change_type.value,
                    "sha256": change.new_sha256 or "",
                    "previous_sha256": change.old_sha256 or "",
                    "language": (scanned.language or "") if scanned else "",
                    "size_bytes": scanned.size_bytes if scanned else 0,
                    "batch_index": 0,
                }
                job_files.append(record)
                state = {
                    "file_id": file_id,
                    "sha256": change.new_sha256 or "",
                    "language": record["language"],
                    "size_bytes": record["size_bytes"],
                    "snapshot_id": job.snapshot_id,
                }
                if change.change_type == ChangeType.ADDED:
                    stats["files_added"] += 1
                    inserted.append(
                        {
                            **state,
                            "project_id": job.project_id,
                            "source_id": source.source_id,
                            "relative_path": change.path,
                        }
                    )
                elif change.change_type == ChangeType.MODIFIED:
                    stats["files_modified"] += 1
                    updated.append(state)
                else:
                    stats["files_deleted"] += 1
                    deleted.append(file_id)
            skipped.extend(
                {
                    "job_id": job.job_id,
                    "source_id": source.source_id,
                    "relative_path": s.relative_path,
                    "reason": s.reason.value,
                    "detail": s.detail,
                }
                for s in walked.skipped
            )
        job_files.sort(key=lambda r: (str(r["source_id"]), str(r["relative_path"])))
        batch_count = 0
        for index, batch in enumerate(batched(job_files, self._settings.batch_size)):
            for record in batch:
                record["batch_index"] = index
            batch_count = index + 1
        await self._store.apply_scan(
            job.job_id,
            ScanResult(job_files, inserted, updated, deleted, skipped, stats, batch_count, commits),
            self._now(),
        )
        for outcome in ("added", "modified", "deleted", "unchanged", "skipped"):
            SCAN_FILES.labels(outcome).inc(stats[f"files_{outcome}"])
        log.info(
            "scan %s: %d seen, %d added, %d modified, %d deleted, %d skipped",
            job.job_id,
            stats["files_seen"],
            stats["files_added"],
            stats["files_modified"],
            stats["files_deleted"],
            stats["files_skipped"],
        )

    async def _walk_documents(self, project_id: str) -> _WalkedSource:
        """The documents source's files are its knowledge documents (their contents stored
        when they were upserted), each with its format as its language."""
        current = {
            row.relative_path: ScannedFile(
                row.relative_path, row.sha256, row.size_bytes, row.format, b""
            )
            for row in await self._store.knowledge_documents(project_id)
        }
        return _WalkedSource(current, [], 0)

    def _walk(self, root: Path) -> _WalkedSource:
        cache = self._read_caches.setdefault(str(root), ReadCache(has_content=self._blobs.exists))
        # What git tracks is indexed even where a .gitignore pattern matches it, as git does.
        tracked = tracked_paths(root, self._settings.history_timeout_seconds)
        walked = self._store_contents(
            walk_source(
                root, max_file_bytes=self._settings.max_file_bytes, cache=cache, tracked=tracked
            )
        )
        cache.retain([*walked.current, *(item.relative_path for item in walked.skipped)])
        return walked

    def _walk_git(self, source: SourceRow) -> _WalkedSource:
        walk = self._git_sources.walk(source)
        walked = self._store_contents(walk.files)
        walk.cache.retain([*walked.current, *(item.relative_path for item in walked.skipped)])
        return _WalkedSource(walked.current, walked.skipped, walked.bytes_read, walk.commit_sha)

    def _store_contents(self, items: Iterable[ScannedFile | SkippedFile]) -> _WalkedSource:
        """Store each read file's content by hash; what was found, without the data."""
        current: dict[str, ScannedFile] = {}
        skipped: list[SkippedFile] = []
        bytes_read = 0
        for item in items:
            if isinstance(item, SkippedFile):
                skipped.append(item)
                continue
            if item.content_read:
                self._blobs.put(item.data, item.sha256)
                bytes_read += item.size_bytes
            current[item.relative_path] = ScannedFile(
                item.relative_path, item.sha256, item.size_bytes, item.language, b""
            )
        return _WalkedSource(current, skipped, bytes_read)

    async def _publish_changes(self, job: JobRow) -> None:
        files = await self._store.job_files(job.job_id)
        roots = {
            source_id: await self._source_roots(job.project_id, source_id)
            for source_id in sorted({row.source_id for row in files})
        }
        batches: dict[int, list[events_pb2.ChangedFile]] = {}
        for row in files:
            root = roots[row.source_id].root_of(row.relative_path, row.language)
            batches.setdefault(row.batch_index, []).append(
                with_source_root(
                    events_pb2.ChangedFile(
                        file_id=row.file_id,
                        source_id=row.source_id,
                        relative_path=row.relative_path,
                        change_type=_CHANGE_TYPES[ChangeType(row.change_type)],
                        sha256=row.sha256,
                        previous_sha256=row.previous_sha256,
                        language=row.language,
                        size_bytes=row.size_bytes,
                    ),
                    root,
                )
            )
        for index in sorted(batches):
            await self._bus.publish(
                self._bus.subjects.files_changed,
                events_pb2.FilesChanged(
                    job_id=job.job_id,
                    project_id=job.project_id,
                    snapshot_id=job.snapshot_id,
                    snapshot_seq=job.snapshot_seq,
                    batch_index=index,
                    files=batches[index],
                ),
                message_id=f"files.changed:{job.job_id}:{index}",
            )

    async def _source_roots(self, project_id: str, source_id: str) -> SourceRoots:
        """Source roots of the source as it is now (its current files, which a republish after
        a crash still finds as the scan left them): unchanged layout files apply as well."""
        current = await self._store.current_files(project_id, source_id)
        try:
            return await asyncio.to_thread(
                self._detect_roots, {path: sha for path, (_, sha) in current.items()}
            )
        except Exception:  # naming is best effort: a detection bug must not block the scan
            log.exception("source roots of %s not detected; files go without", source_id)
            return SourceRoots({})

    def _detect_roots(self, files: Mapping[str, str]) -> SourceRoots:
        """The roots of a snapshot of a source (path → sha256), its layout files read from the
        blob store."""
        layout_files: dict[str, str] = {}
        for path in layout_files_to_read(files):
            try:
                data = self._blobs.get(files[path])
            except (BlobNotFound, OSError) as error:
                log.warning("source roots: cannot read %s: %s", path, error)
                continue
            if len(data) <= MAX_LAYOUT_FILE_BYTES:
                layout_files[path] = data.decode("utf-8", errors="replace")
        return detect_source_roots(files, layout_files)

    async def _rerooted(
        self,
        previous: Mapping[str, tuple[str, str]],
        current: Mapping[str, ScannedFile],
        changes: Sequence[FileChange],
    ) -> list[FileChange]:
        """Unchanged files whose source root the changes move (a package renamed in its
        package.json, a go.mod's new module path, a new pyproject.toml or src/ layout), as
        modifications without new content: every stage then names their modules from the new
        root, not only the files that changed."""
        if not any(may_move_roots(c.path, c.change_type != ChangeType.MODIFIED) for c in changes):
            return []
        changed = {c.path for c in changes}
        unchanged = {
            path: scanned.language or "" for path, scanned in current.items() if path not in changed
        }
        if not unchanged:  # a first scan: nothing had a root before
            return []

        def compare() -> list[str]:
            before = self._detect_roots({path: sha for path, (_, sha) in previous.items()})
            after = self._detect_roots({path: f.sha256 for path, f in current.items()})
            return rerooted_paths(before, after, unchanged)

        try:
            paths = await asyncio.to_thread(compare)
        except Exception:  # naming is best effort, as in _source_roots
            log.exception("source roots not compared; unchanged files keep their names")
            return []
        return [
            FileChange(path, ChangeType.MODIFIED, current[path].sha256, current[path].sha256)
            for path in paths
        ]

    async def record_index_update(self, event: events_pb2.IndexUpdated) -> None:
        if not event.job_id or not event.stage:
            raise InvalidRequest("index.updated without job_id or stage")
        job = await self._store.get_job(event.job_id)
        if job is None:
            log.warning("index.updated for unknown job %s ignored", event.job_id)
            return
        status_names = {
            events_pb2.INDEX_STATUS_INDEXED: "INDEXED",
            events_pb2.INDEX_STATUS_SKIPPED: "INDEXED",
            events_pb2.INDEX_STATUS_FAILED: "FAILED",
        }
        await self._store.record_stage(
            job.job_id,
            event.stage,
            [(f.file_id, status_names.get(f.status, "FAILED"), f.error) for f in event.files],
        )
        self.progress_checks.request(job.job_id)

    async def check_progress(self, job_id: str) -> None:
        """Complete the job, or publish its embedded level, when its files got there."""
        job = await self._store.get_job(job_id)
        if job is not None:
            await self._complete_if_done(job)

    async def jobs_to_check(self) -> list[str]:
        since = self._now() - timedelta(seconds=self._settings.stale_job_seconds)
        return await self._store.jobs_to_check(since)

    async def _complete_if_done(self, job: JobRow) -> None:
        """COMPLETED (and scan.completed at SEARCHABLE) once every file is searchable; then
        scan.completed at EMBEDDED once every file has its vectors too."""
        fresh = await self._store.get_job(job.job_id)
        if fresh is None or fresh.state not in ("INDEXING", "COMPLETED"):
            return
        progress = await self.job_progress(fresh)
        if not progress.done:
            return
        if fresh.state == "INDEXING":
            # Published first (its id deduplicates a repeat): a crash in between leaves the
            # job INDEXING, and the next check publishes again and completes it.
            await self._publish_completed(fresh, failed=False, error="")
            if not await self._store.complete_job(fresh, self._now(), failed=False):
                return
        if progress.embedded_done and not await self._store.is_marked_embedded(fresh.job_id):
            if self._settings.embedding_stages:
                await self._publish_completed(
                    fresh, failed=False, error="", level=events_pb2.SCAN_LEVEL_EMBEDDED
                )
            await self._store.mark_embedded(fresh.job_id, self._now())

    async def _publish_completed(
        self,
        job: JobRow,
        *,
        failed: bool,
        error: str,
        level: events_pb2.ScanLevel = events_pb2.SCAN_LEVEL_SEARCHABLE,
    ) -> None:
        fresh = await self._store.get_job(job.job_id) or job
        progress = await self.job_progress(fresh)
        if not failed and level == events_pb2.SCAN_LEVEL_SEARCHABLE and progress.embedded_done:
            level = events_pb2.SCAN_LEVEL_EMBEDDED  # nothing waits for vectors
        event = events_pb2.ScanCompleted(
            job_id=job.job_id,
            project_id=job.project_id,
            snapshot_id=job.snapshot_id,
            stats=scan_stats(fresh, progress),
            failed=failed,
            error=error,
            level=events_pb2.SCAN_LEVEL_UNSPECIFIED if failed else level,
        )
        event.completed_at.FromDatetime(self._now())
        suffix = ":embedded" if event.level == events_pb2.SCAN_LEVEL_EMBEDDED else ""
        ack = await self._bus.publish(
            self._bus.subjects.scan_completed,
            event,
            message_id=f"scan.completed:{job.job_id}{suffix}",
        )
        if not ack.duplicate:
            SCANS.labels("failed" if failed else "embedded" if suffix else "searchable").inc()

    async def list_skipped(self, job_id: str, offset: int, limit: int) -> list[SkippedFileRow]:
        return await self._store.list_skipped(job_id, offset, limit)

    async def list_files(
        self, project_id: str, path_prefix: str, offset: int, limit: int
    ) -> list[FileRow]:
        return await self._store.list_files(project_id, path_prefix, offset, limit)


def scan_stats(job: JobRow, progress: JobProgress) -> events_pb2.ScanStats:
    return events_pb2.ScanStats(
        files_seen=job.files_seen,
        files_skipped=job.files_skipped,
        files_added=job.files_added,
        files_modified=job.files_modified,
        files_deleted=job.files_deleted,
        files_unchanged=job.files_unchanged,
        bytes_read=job.bytes_read,
        files_parsed=progress.parsed,
        files_indexed=progress.indexed,
        files_failed=progress.failed,
        # Where no stage makes vectors, no file has them (progress counts them all embedded).
        files_embedded=progress.embedded if progress.embedding_stages else 0,
        files_embedding_failed=progress.embedding_failed,
    )


def scan_level(job: JobRow, progress: JobProgress) -> events_pb2.ScanLevel:
    """The level every changed file of ``job`` has reached (searchable at most where no stage
    makes vectors)."""
    if job.state != "COMPLETED":
        return events_pb2.SCAN_LEVEL_UNSPECIFIED
    if progress.embedded_done and progress.embedding_stages:
        return events_pb2.SCAN_LEVEL_EMBEDDED
    return events_pb2.SCAN_LEVEL_SEARCHABLE


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
