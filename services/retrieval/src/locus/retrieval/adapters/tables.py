"""Relational schema of the retrieval store (SQLite by default, PostgreSQL in production):
the embedding cache, the indexed version of every file, the snapshots seen, which parts
of which file versions have their vectors, and the projects deleted (tombstones)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Integer, LargeBinary, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class EmbeddingRow(Base):
    """One vector per (model, chunk content): a rescan or another snapshot never re-embeds."""

    __tablename__ = "embedding_cache"
    model_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    content_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    vector: Mapped[bytes] = mapped_column(LargeBinary)  # float32, little-endian


class FileStateRow(Base):
    __tablename__ = "file_states"
    file_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(100), index=True)
    snapshot_seq: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    deleted: Mapped[bool] = mapped_column(Boolean)
    part_count: Mapped[int] = mapped_column(Integer)
    parts_done: Mapped[str] = mapped_column(Text)  # comma-separated part indexes
    chunk_count: Mapped[int] = mapped_column(Integer)


class SnapshotRow(Base):
    __tablename__ = "snapshots"
    snapshot_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(100), index=True)
    snapshot_seq: Mapped[int] = mapped_column(BigInteger)


class VectorPartRow(Base):
    """A part of a file version whose vectors are written (the vectors lane's progress)."""

    __tablename__ = "vector_parts"
    file_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    part_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    snapshot_seq: Mapped[int] = mapped_column(BigInteger)


class DeletedProjectRow(Base):
    """A project deleted by ``project.deleted`` (ids are never reused): files.parsed and
    vectors.requested of it are dropped, so a late event of a finished scan cannot write the
    project back (chunks, its BM25 index directory, vectors, file versions)."""

    __tablename__ = "retrieval_deleted_projects"
    project_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
