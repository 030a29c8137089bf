"""The ingestion store: projects, sources, the current files of each project, scan jobs and
their per-file, per-stage progress, and each project's knowledge documents. One SQLAlchemy
implementation for SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import and_, case, delete, false, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from locus.database import Database, table_of
from locus.database.migrations import prepare_schema
from locus.ingestion.adapters.migrations import SCHEMA
from locus.ingestion.adapters.tables import (
    EmbeddedJobRow,
    FileRow,
    JobCommitRow,
    JobFileRow,
    JobFileStageRow,
    JobRow,
    KnowledgeDocumentRow,
    ProjectRow,
    SkippedFileRow,
    SourceRow,
)
from locus.ingestion.domain.errors import ProjectAlreadyExists, SourceAlreadyExists

ACTIVE_STATES = ("QUEUED", "SCANNING", "INDEXING")


@dataclass(frozen=True)
class JobProgress:
    """Files of a job by level: ``indexed`` are searchable (every required stage reported),
    ``embedded`` have their vectors too (every embedding stage reported as well); ``failed``
    failed a required stage, ``embedding_failed`` are searchable but failed an embedding stage."""

    total: int
    parsed: int
    indexed: int
    failed: int
    embedded: int = 0
    embedding_failed: int = 0
    embedding_stages: int = 0  # how many stages make a file embedded (0: no vectors)

    @property
    def done(self) -> bool:
        """Every file is searchable or failed."""
        return self.indexed + self.failed >= self.total

    @property
    def embedded_done(self) -> bool:
        """Every file is embedded, or failed at some level."""
        if not self.embedding_stages:
            return self.done
        return self.embedded + self.embedding_failed + self.failed >= self.total


@dataclass(frozen=True)
class ScanResult:
    """Everything one scan changes, written in a single transaction."""

    job_files: list[dict[str, object]]
    inserted_files: list[dict[str, object]]
    updated_files: list[dict[str, object]]
    deleted_file_ids: list[str]
    skipped: list[dict[str, object]]
    stats: dict[str, int]
    batches: int
    # git sources: source_id → (ref, the commit the walk read)
    commits: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class DeletedProject:
    """What ``delete_project`` removed."""

    sources: list[SourceRow]
    files: int
    unreferenced_hashes: list[str]  # snapshots no remaining project refers to


class IngestionStore:
    def __init__(self, database: Database, *, migrate_on_start: bool = True) -> None:
        self._db = database
        self._migrate_on_start = migrate_on_start

    async def initialize(self) -> None:
        await prepare_schema(self._db, SCHEMA, migrate_on_start=self._migrate_on_start)

    async def close(self) -> None:
        await self._db.dispose()

    async def ping(self) -> None:
        async with self._db.sessions() as session:
            await session.execute(select(1))

    # projects and sources

    async def create_project(self, row: ProjectRow) -> ProjectRow:
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:
            raise ProjectAlreadyExists(f"a project named {row.name!r} exists already") from None
        return row

    async def find_project(self, id_or_name: str) -> ProjectRow | None:
        async with self._db.sessions() as session:
            row = await session.get(ProjectRow, id_or_name)
            if row is None:
                row = await session.scalar(select(ProjectRow).where(ProjectRow.name == id_or_name))
            return row

    async def list_projects(self, offset: int, limit: int) -> list[ProjectRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(ProjectRow).order_by(ProjectRow.name).offset(offset).limit(limit)
            )
            return list(rows)

    async def add_source(self, row: SourceRow) -> SourceRow:
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:
            raise SourceAlreadyExists(f"{row.path or row.git_url} is already a source") from None
        return row

    async def get_source(self, source_id: str) -> SourceRow | None:
        async with self._db.sessions() as session:
            return await session.get(SourceRow, source_id)

    async def polled_sources(self) -> list[SourceRow]:
        """Git sources with a polling interval."""
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(SourceRow).where(SourceRow.poll_seconds > 0).order_by(SourceRow.created_at)
            )
            return list(rows)

    async def job_commits(self, job_id: str) -> list[JobCommitRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(JobCommitRow)
                .where(JobCommitRow.job_id == job_id)
                .order_by(JobCommitRow.source_id)
            )
            return list(rows)

    async def mark_source_removing(self, source_id: str) -> None:
        async with self._db.transaction() as session:
            await session.execute(
                update(SourceRow).where(SourceRow.source_id == source_id).values(removing=True)
            )

    async def drop_removed_sources(self, project_id: str) -> list[SourceRow]:
        """Delete the project's sources marked for removal that have no current file left
        (a documents source's documents with it); returns them."""
        async with self._db.transaction() as session:
            marked = list(
                await session.scalars(
                    select(SourceRow).where(
                        SourceRow.project_id == project_id, SourceRow.removing.is_(True)
                    )
                )
            )
            dropped: list[SourceRow] = []
            for source in marked:
                left = await session.scalar(
                    select(FileRow.file_id).where(FileRow.source_id == source.source_id).limit(1)
                )
                if left is not None:
                    continue
                if source.kind == "documents":
                    await session.execute(
                        delete(KnowledgeDocumentRow).where(
                            KnowledgeDocumentRow.source_id == source.source_id
                        )
                    )
                await session.execute(
                    delete(SourceRow).where(SourceRow.source_id == source.source_id)
                )
                dropped.append(source)
            return dropped

    async def list_sources(self, project_id: str) -> list[SourceRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(SourceRow)
                .where(SourceRow.project_id == project_id)
                .order_by(SourceRow.created_at)
            )
            return list(rows)

    # knowledge documents

    async def documents_source(self, row: SourceRow) -> SourceRow:
        """The project's documents source, created as ``row`` when it has none yet."""
        async with self._db.transaction() as session:
            found = await session.scalar(
                select(SourceRow).where(
                    SourceRow.project_id == row.project_id, SourceRow.kind == "documents"
                )
            )
            if found is not None:
                return found
        try:
            async with self._db.transaction() as session:
                session.add(row)
        except IntegrityError:  # created by a concurrent call: (project, "", "", "") is unique
            async with self._db.sessions() as session:
                found = await session.scalar(
                    select(SourceRow).where(
                        SourceRow.project_id == row.project_id, SourceRow.kind == "documents"
                    )
                )
                if found is None:
                    raise
                return found
        return row

    async def knowledge_documents(self, project_id: str) -> list[KnowledgeDocumentRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(KnowledgeDocumentRow)
                .where(KnowledgeDocumentRow.project_id == project_id)
                .order_by(KnowledgeDocumentRow.relative_path)
            )
            return list(rows)

    async def replace_documents(
        self, project_id: str, upserts: Sequence[KnowledgeDocumentRow], removed_ids: Sequence[str]
    ) -> None:
        """Write ``upserts`` (replacing rows of the same id) and delete ``removed_ids``, in one
        transaction."""
        ids = [*removed_ids, *(row.document_id for row in upserts)]
        async with self._db.transaction() as session:
            for chunk in _chunks(ids):
                await session.execute(
                    delete(KnowledgeDocumentRow).where(
                        KnowledgeDocumentRow.project_id == project_id,
                        KnowledgeDocumentRow.document_id.in_(chunk),
                    )
                )
            await session.flush()
            for row in upserts:
                session.add(_detached_copy(row))

    # jobs

    async def jobs_to_check(self, completed_since: datetime) -> list[str]:
        """Jobs whose progress may still move: indexing ones, and ones completed since
        ``completed_since`` whose embedded level was not published yet."""
        async with self._db.sessions() as session:
            indexing = await session.scalars(
                select(JobRow.job_id).where(JobRow.state == "INDEXING")
            )
            waiting = await session.scalars(
                select(JobRow.job_id)
                .outerjoin(EmbeddedJobRow, EmbeddedJobRow.job_id == JobRow.job_id)
                .where(
                    JobRow.state == "COMPLETED",
                    JobRow.completed_at >= completed_since,
                    EmbeddedJobRow.job_id.is_(None),
                )
            )
            return [*indexing, *waiting]

    async def mark_embedded(self, job_id: str, now: datetime) -> bool:
        """Record that the job reached the embedded level; True only for the first caller."""
        try:
            async with self._db.transaction() as session:
                if await session.get(EmbeddedJobRow, job_id) is not None:
                    return False
                session.add(EmbeddedJobRow(job_id=job_id, embedded_at=now))
        except IntegrityError:  # another replica marked it first
            return False
        return True

    async def is_marked_embedded(self, job_id: str) -> bool:
        async with self._db.sessions() as session:
            return await session.get(EmbeddedJobRow, job_id) is not None

    async def active_job(self, project_id: str) -> JobRow | None:
        async with self._db.sessions() as session:
            return await session.scalar(
                select(JobRow)
                .where(JobRow.project_id == project_id, JobRow.state.in_(ACTIVE_STATES))
                .order_by(JobRow.created_at.desc())
            )

    async def create_job(self, row: JobRow) -> JobRow:
        """Insert the job with the project's next snapshot sequence number."""
        async with self._db.transaction() as session:
            seq = await session.scalar(
                update(ProjectRow)
                .where(ProjectRow.project_id == row.project_id)
                .values(last_snapshot_seq=ProjectRow.last_snapshot_seq + 1)
                .returning(ProjectRow.last_snapshot_seq)
            )
            row.snapshot_seq = int(seq or 1)
            session.add(row)
        return row

    async def get_job(self, job_id: str) -> JobRow | None:
        async with self._db.sessions() as session:
            return await session.get(JobRow, job_id)

    async def set_job_state(
        self,
        job_id: str,
        state: str,
        now: datetime,
        *,
        error: str = "",
        only_from: Sequence[str] = (),
    ) -> bool:
        async with self._db.transaction() as session:
            statement = update(JobRow).where(JobRow.job_id == job_id)
            if only_from:
                statement = statement.where(JobRow.state.in_(only_from))
            values: dict[str, object] = {"state": state, "updated_at": now}
            if error:
                values["error"] = error
            if state in ("COMPLETED", "FAILED"):
                values["completed_at"] = now
            result = await session.execute(statement.values(**values))
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def current_files(self, project_id: str, source_id: str) -> dict[str, tuple[str, str]]:
        """relative_path → (file_id, sha256) for one source of a project."""
        async with self._db.sessions() as session:
            rows = await session.execute(
                select(FileRow.relative_path, FileRow.file_id, FileRow.sha256).where(
                    FileRow.project_id == project_id, FileRow.source_id == source_id
                )
            )
            return {path: (file_id, sha) for path, file_id, sha in rows}

    async def apply_scan(self, job_id: str, result: ScanResult, now: datetime) -> None:
        """Record the job's changes and move the project's files to the new snapshot, atomically;
        the job moves to INDEXING in the same transaction."""
        async with self._db.transaction() as session:
            await session.execute(delete(JobFileRow).where(JobFileRow.job_id == job_id))
            await session.execute(delete(SkippedFileRow).where(SkippedFileRow.job_id == job_id))
            await session.execute(delete(JobCommitRow).where(JobCommitRow.job_id == job_id))
            for source_id, (ref, sha) in sorted(result.commits.items()):
                session.add(
                    JobCommitRow(job_id=job_id, source_id=source_id, git_ref=ref, commit_sha=sha)
                )
                await session.execute(
                    update(SourceRow)
                    .where(SourceRow.source_id == source_id)
                    .values(last_commit_sha=sha)
                )
            for chunk in _chunks(result.job_files):
                await session.execute(insert(table_of(JobFileRow)), chunk)
            for chunk in _chunks(result.skipped):
                await session.execute(insert(table_of(SkippedFileRow)), chunk)
            for chunk in _chunks(result.inserted_files):
                await session.execute(insert(table_of(FileRow)), chunk)
            for chunk in _chunks(result.updated_files):
                await session.execute(update(FileRow), chunk)
            for ids in _chunks(result.deleted_file_ids):
                await session.execute(delete(FileRow).where(FileRow.file_id.in_(ids)))
            await session.execute(
                update(JobRow)
                .where(JobRow.job_id == job_id)
                .values(state="INDEXING", updated_at=now, batches=result.batches, **result.stats)
            )

    async def job_files(self, job_id: str) -> list[JobFileRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(JobFileRow)
                .where(JobFileRow.job_id == job_id)
                .order_by(JobFileRow.batch_index, JobFileRow.relative_path)
            )
            return list(rows)

    async def record_stage(
        self, job_id: str, stage: str, reports: Iterable[tuple[str, str, str]]
    ) -> None:
        """Upsert (file_id, status, error) reports of one stage for files of the job."""
        values: list[dict[str, object]] = [
            {"job_id": job_id, "file_id": f, "stage": stage, "status": s, "error": e}
            for f, s, e in reports
        ]
        if not values:
            return
        async with self._db.transaction() as session:
            known = set(
                await session.scalars(
                    select(JobFileRow.file_id).where(
                        JobFileRow.job_id == job_id,
                        JobFileRow.file_id.in_([v["file_id"] for v in values]),
                    )
                )
            )
            values = [v for v in values if v["file_id"] in known]
            if values:
                await _upsert_stages(session, values)

    async def progress(
        self,
        job_id: str,
        required_stages: Sequence[str],
        embedding_stages: Sequence[str] = (),
    ) -> JobProgress:
        """Counted by the database (one pass over the job's stage reports, grouped by file):
        GetScan polls and every progress check call this, on jobs of thousands of files."""
        async with self._db.sessions() as session:
            total = int(
                await session.scalar(
                    select(func.count()).select_from(JobFileRow).where(JobFileRow.job_id == job_id)
                )
                or 0
            )
            if not required_stages:
                return JobProgress(total=total, parsed=0, indexed=total, failed=0, embedded=total)
            stage = JobFileStageRow.stage
            failed = JobFileStageRow.status == "FAILED"
            required = stage.in_(list(required_stages))
            embedding = stage.in_(list(embedding_stages)) if embedding_stages else false()
            per_file = (
                select(
                    func.max(case((stage == required_stages[0], 1), else_=0)).label("parsed"),
                    func.sum(case((required, 1), else_=0)).label("required"),
                    func.max(case((and_(required, failed), 1), else_=0)).label("failed"),
                    func.sum(case((embedding, 1), else_=0)).label("embedding"),
                    func.max(case((and_(embedding, failed), 1), else_=0)).label("emb_failed"),
                )
                .where(JobFileStageRow.job_id == job_id)
                .group_by(JobFileStageRow.file_id)
                .subquery()
            )
            searchable = and_(
                per_file.c.failed == 0, per_file.c.required >= len(set(required_stages))
            )
            row = (
                await session.execute(
                    select(
                        func.coalesce(func.sum(per_file.c.parsed), 0),
                        func.coalesce(func.sum(case((per_file.c.failed == 1, 1), else_=0)), 0),
                        func.coalesce(func.sum(case((searchable, 1), else_=0)), 0),
                        func.coalesce(
                            func.sum(
                                case(
                                    (
                                        and_(
                                            searchable,
                                            per_file.c.emb_failed == 0,
                                            per_file.c.embedding >= len(set(embedding_stages)),
                                        ),
                                        1,
                                    ),
                                    else_=0,
                                )
                            ),
                            0,
                        ),
                        func.coalesce(
                            func.sum(
                                case((and_(searchable, per_file.c.emb_failed == 1), 1), else_=0)
                            ),
                            0,
                        ),
                    )
                )
            ).one()
        parsed, failed_files, indexed, embedded, embedding_failed = (int(v) for v in row)
        return JobProgress(
            total=total,
            parsed=parsed,
            indexed=indexed,
            failed=failed_files,
            embedded=embedded,
            embedding_failed=embedding_failed,
            embedding_stages=len(embedding_stages),
        )

    async def complete_job(
        self, job: JobRow, now: datetime, *, failed: bool, error: str = ""
    ) -> bool:
        """Move an INDEXING job to COMPLETED/FAILED; True only for the caller that did it."""
        async with self._db.transaction() as session:
            result = await session.execute(
                update(JobRow)
                .where(JobRow.job_id == job.job_id, JobRow.state.in_(ACTIVE_STATES))
                .values(
                    state="FAILED" if failed else "COMPLETED",
                    error=error,
                    updated_at=now,
                    completed_at=now,
                )
            )
            if not result.rowcount:  # type: ignore[attr-defined]
                return False
            await session.execute(
                update(ProjectRow)
                .where(ProjectRow.project_id == job.project_id)
                .values(latest_snapshot_id=job.snapshot_id)
            )
            return True

    async def list_skipped(self, job_id: str, offset: int, limit: int) -> list[SkippedFileRow]:
        async with self._db.sessions() as session:
            rows = await session.scalars(
                select(SkippedFileRow)
                .where(SkippedFileRow.job_id == job_id)
                .order_by(SkippedFileRow.relative_path)
                .offset(offset)
                .limit(limit)
            )
            return list(rows)

    async def list_files(
        self, project_id: str, path_prefix: str, offset: int, limit: int
    ) -> list[FileRow]:
        async with self._db.sessions() as session:
            statement = select(FileRow).where(FileRow.project_id == project_id)
            if path_prefix:
                # Escaped: % and _ in a path are characters, not LIKE wildcards.
                statement = statement.where(
                    FileRow.relative_path.startswith(path_prefix, autoescape=True)
                )
            rows = await session.scalars(
                statement.order_by(FileRow.relative_path).offset(offset).limit(limit)
            )
            return list(rows)

    async def delete_project(self, project_id: str) -> DeletedProject:
        """Delete the project, its sources, files, scan jobs and their progress in one
        transaction; returns what went and the content hashes that no remaining row of any
        project references any more (their snapshots can be deleted)."""
        async with self._db.transaction() as session:
            job_ids = list(
                await session.scalars(select(JobRow.job_id).where(JobRow.project_id == project_id))
            )
            hashes: set[str] = set(
                await session.scalars(
                    select(FileRow.sha256).where(FileRow.project_id == project_id)
                )
            )
            sources = list(
                await session.scalars(select(SourceRow).where(SourceRow.project_id == project_id))
            )
            files = await session.scalar(
                select(func.count()).select_from(FileRow).where(FileRow.project_id == project_id)
            )
            hashes.update(
                await session.scalars(
                    select(KnowledgeDocumentRow.sha256).where(
                        KnowledgeDocumentRow.project_id == project_id
                    )
                )
            )
            await session.execute(
                delete(KnowledgeDocumentRow).where(KnowledgeDocumentRow.project_id == project_id)
            )
            for ids in _chunks(job_ids):
                rows = await session.execute(
                    select(JobFileRow.sha256, JobFileRow.previous_sha256).where(
                        JobFileRow.job_id.in_(ids)
                    )
                )
                for sha, previous in rows:
                    hashes.update(h for h in (sha, previous) if h)
                for table in (
                    JobFileStageRow,
                    JobFileRow,
                    SkippedFileRow,
                    JobCommitRow,
                    EmbeddedJobRow,
                ):
                    await session.execute(delete(table).where(table.job_id.in_(ids)))
            await session.execute(delete(JobRow).where(JobRow.project_id == project_id))
            await session.execute(delete(FileRow).where(FileRow.project_id == project_id))
            await session.execute(delete(SourceRow).where(SourceRow.project_id == project_id))
            await session.execute(delete(ProjectRow).where(ProjectRow.project_id == project_id))
            still_used: set[str] = set()
            candidates = sorted(hashes)
            for shas in _chunks(candidates):
                still_used.update(
                    await session.scalars(select(FileRow.sha256).where(FileRow.sha256.in_(shas)))
                )
                still_used.update(
                    await session.scalars(
                        select(JobFileRow.sha256).where(JobFileRow.sha256.in_(shas))
                    )
                )
                still_used.update(
                    await session.scalars(
                        select(KnowledgeDocumentRow.sha256).where(
                            KnowledgeDocumentRow.sha256.in_(shas)
                        )
                    )
                )
                still_used.update(
                    await session.scalars(
                        select(JobFileRow.previous_sha256).where(
                            JobFileRow.previous_sha256.in_(shas)
                        )
                    )
                )
        return DeletedProject(
            sources=sources,
            files=int(files or 0),
            unreferenced_hashes=[sha for sha in candidates if sha not in still_used],
        )

    async def sha_is_known(self, sha256: str) -> bool:
        async with self._db.sessions() as session:
            found = await session.scalar(
                select(JobFileRow.file_id).where(JobFileRow.sha256 == sha256).limit(1)
            )
            return found is not None


def _detached_copy(row: KnowledgeDocumentRow) -> KnowledgeDocumentRow:
    """A fresh row with ``row``'s values (the caller keeps its own, unattached to a session)."""
    return KnowledgeDocumentRow(
        **{column.key: getattr(row, column.key) for column in table_of(KnowledgeDocumentRow).c}
    )


async def _upsert_stages(session: AsyncSession, values: list[dict[str, object]]) -> None:
    dialect = session.bind.dialect.name if session.bind else "sqlite"
    module = postgresql if dialect == "postgresql" else sqlite
    statement = module.insert(JobFileStageRow).values(values)
    statement = statement.on_conflict_do_update(
        index_elements=["job_id", "file_id", "stage"],
        set_={"status": statement.excluded.status, "error": statement.excluded.error},
    )
    await session.execute(statement)


def _chunks(items: Sequence[object], size: int = 500) -> Iterable[list]:  # type: ignore[type-arg]
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
