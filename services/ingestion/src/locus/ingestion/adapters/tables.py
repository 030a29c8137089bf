"""Relational schema of the ingestion store (SQLite by default, PostgreSQL in production)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class SystemRow(Base):
    """The top of the registry: System -> Subsystem -> Project."""

    __tablename__ = "systems"
    system_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SubsystemRow(Base):
    __tablename__ = "subsystems"
    __table_args__ = (UniqueConstraint("system_id", "name"),)
    subsystem_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    system_id: Mapped[str] = mapped_column(ForeignKey("systems.system_id"))
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ProjectRow(Base):
    __tablename__ = "projects"
    project_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    # At most one subsystem (deleting a subsystem with projects is refused).
    subsystem_id: Mapped[str | None] = mapped_column(
        ForeignKey("subsystems.subsystem_id"), nullable=True, index=True, default=None
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    latest_snapshot_id: Mapped[str] = mapped_column(String(40), default="")
    last_snapshot_seq: Mapped[int] = mapped_column(BigInteger, default=0)


class SourceRow(Base):
    __tablename__ = "sources"
    __table_args__ = (UniqueConstraint("project_id", "path", "git_url", "git_ref"),)
    source_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.project_id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    path: Mapped[str] = mapped_column(Text, default="")
    git_url: Mapped[str] = mapped_column(Text, default="")
    git_ref: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Git sources: where the token is read from (names only, never the secret), how often the
    # ref is polled (0 = never) and the commit the last completed walk read.
    credential_file: Mapped[str] = mapped_column(Text, default="")
    credential_env: Mapped[str] = mapped_column(String(200), default="")
    poll_seconds: Mapped[int] = mapped_column(Integer, default=0)
    last_commit_sha: Mapped[str] = mapped_column(String(64), default="")
    # RemoveSource: the next walk of this source finds nothing (its files are retracted as
    # deleted), then the source goes.
    removing: Mapped[bool] = mapped_column(Boolean, default=False)


class FileRow(Base):
    """The current state of every file of a project (as of its latest scan)."""

    __tablename__ = "files"
    __table_args__ = (Index("ix_files_project_path", "project_id", "relative_path"),)
    file_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40), index=True)
    source_id: Mapped[str] = mapped_column(String(40), index=True)
    relative_path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    language: Mapped[str] = mapped_column(String(40), default="")
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    snapshot_id: Mapped[str] = mapped_column(String(40))


class JobRow(Base):
    __tablename__ = "scan_jobs"
    job_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40), index=True)
    snapshot_id: Mapped[str] = mapped_column(String(40))
    snapshot_seq: Mapped[int] = mapped_column(BigInteger)
    source_ids: Mapped[str] = mapped_column(Text, default="")  # comma-separated, "" = all
    state: Mapped[str] = mapped_column(String(20), index=True)
    error: Mapped[str] = mapped_column(Text, default="")
    request_id: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    files_seen: Mapped[int] = mapped_column(BigInteger, default=0)
    files_skipped: Mapped[int] = mapped_column(BigInteger, default=0)
    files_added: Mapped[int] = mapped_column(BigInteger, default=0)
    files_modified: Mapped[int] = mapped_column(BigInteger, default=0)
    files_deleted: Mapped[int] = mapped_column(BigInteger, default=0)
    files_unchanged: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes_read: Mapped[int] = mapped_column(BigInteger, default=0)
    batches: Mapped[int] = mapped_column(Integer, default=0)


class JobCommitRow(Base):
    """The commit a scan job read from one git source."""

    __tablename__ = "scan_job_commits"
    job_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    git_ref: Mapped[str] = mapped_column(String(200), default="")
    commit_sha: Mapped[str] = mapped_column(String(64))


class EmbeddedJobRow(Base):
    """A job whose scan.completed at the EMBEDDED level was published (published once)."""

    __tablename__ = "embedded_jobs"
    job_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    embedded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class JobFileRow(Base):
    """A file a job changed (and must see indexed downstream)."""

    __tablename__ = "scan_job_files"
    job_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    file_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(40))
    relative_path: Mapped[str] = mapped_column(Text)
    change_type: Mapped[str] = mapped_column(String(10))
    sha256: Mapped[str] = mapped_column(String(64), default="")
    previous_sha256: Mapped[str] = mapped_column(String(64), default="")
    language: Mapped[str] = mapped_column(String(40), default="")
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    batch_index: Mapped[int] = mapped_column(Integer, default=0)


class JobFileStageRow(Base):
    """What a downstream stage reported for one file of one job."""

    __tablename__ = "scan_job_file_stages"
    job_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    file_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    stage: Mapped[str] = mapped_column(String(40), primary_key=True)
    status: Mapped[str] = mapped_column(String(20))
    error: Mapped[str] = mapped_column(Text, default="")


class SkippedFileRow(Base):
    __tablename__ = "scan_skipped_files"
    job_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    relative_path: Mapped[str] = mapped_column(Text, primary_key=True)
    reason: Mapped[str] = mapped_column(String(40))
    detail: Mapped[str] = mapped_column(Text, default="")


class KnowledgeDocumentRow(Base):
    """A document from outside the project's repositories, a file of its documents source."""

    __tablename__ = "knowledge_documents"
    __table_args__ = (
        Index("ix_knowledge_documents_project_path", "project_id", "relative_path", unique=True),
    )
    document_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40), index=True)
    source_id: Mapped[str] = mapped_column(String(40))
    title: Mapped[str] = mapped_column(Text)
    url: Mapped[str] = mapped_column(Text, default="")
    format: Mapped[str] = mapped_column(String(20))
    relative_path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
