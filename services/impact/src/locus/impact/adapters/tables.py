"""Relational schema of the impact projection (SQLite by default, PostgreSQL in production).

Rows of a file are keyed by (file_id, part_index, ordinal): a part is replaced as a whole, so a
redelivered part rewrites the same rows instead of adding more. A deleted project keeps a
tombstone (``impact_deleted_projects``), so a late event of it writes nothing.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ID = 128  # node, file, job and project ids are short hashes or uuids; leave room


class Base(DeclarativeBase):
    pass


class ProjectRow(Base):
    """``version`` grows with every change to the project's graph, so each replica knows
    when its in-memory graph of the project is out of date."""

    __tablename__ = "impact_projects"
    project_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, default=0)


class FileRow(Base):
    """The version of each file the graph holds; a deleted file stays as a tombstone so an
    older event redelivered later cannot bring it back."""

    __tablename__ = "impact_files"
    file_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(ID), index=True)
    snapshot_id: Mapped[str] = mapped_column(String(ID), default="")
    snapshot_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    sha256: Mapped[str] = mapped_column(String(64), default="")
    relative_path: Mapped[str] = mapped_column(Text, default="")
    module_name: Mapped[str] = mapped_column(Text, default="")
    language: Mapped[str] = mapped_column(String(40), default="")
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    part_count: Mapped[int] = mapped_column(Integer, default=1)
    parts_done: Mapped[str] = mapped_column(Text, default="")  # comma-separated part indexes


class SymbolRow(Base):
    __tablename__ = "impact_symbols"
    # (project_id, qualified_name) also serves the lookups by project_id alone.
    __table_args__ = (Index("ix_impact_symbols_project_name", "project_id", "qualified_name"),)
    file_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    part_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[str] = mapped_column(String(ID))
    node_id: Mapped[str] = mapped_column(String(ID))
    qualified_name: Mapped[str] = mapped_column(Text)
    scope_name: Mapped[str] = mapped_column(Text, default="")
    name: Mapped[str] = mapped_column(Text, default="")
    kind: Mapped[str] = mapped_column(String(20))
    relative_path: Mapped[str] = mapped_column(Text, default="")
    start_line: Mapped[int] = mapped_column(Integer, default=0)
    end_line: Mapped[int] = mapped_column(Integer, default=0)
    language: Mapped[str] = mapped_column(String(40), default="")
    snapshot_id: Mapped[str] = mapped_column(String(ID), default="")
    signature: Mapped[str] = mapped_column(Text, default="")
    docstring: Mapped[str] = mapped_column(Text, default="")
    parent_node_id: Mapped[str] = mapped_column(String(ID), default="")
    parent_qualified_name: Mapped[str] = mapped_column(Text, default="")


class RelationRow(Base):
    __tablename__ = "impact_relations"
    __table_args__ = (Index("ix_impact_relations_project", "project_id"),)
    file_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    part_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[str] = mapped_column(String(ID))
    kind: Mapped[str] = mapped_column(String(20))
    source_node_id: Mapped[str] = mapped_column(String(ID), default="")
    source_qualified_name: Mapped[str] = mapped_column(Text, default="")
    target_name: Mapped[str] = mapped_column(Text, default="")
    target_qualified_name: Mapped[str] = mapped_column(Text, default="")
    target_node_id: Mapped[str] = mapped_column(String(ID), default="")
    line: Mapped[int] = mapped_column(Integer, default=0)


class DependencyRow(Base):
    __tablename__ = "impact_dependencies"
    __table_args__ = (Index("ix_impact_dependencies_project", "project_id"),)
    file_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    part_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[str] = mapped_column(String(ID))
    target_module: Mapped[str] = mapped_column(Text)
    target_file_id: Mapped[str] = mapped_column(String(ID), default="")
    line: Mapped[int] = mapped_column(Integer, default=0)


class DeletedProjectRow(Base):
    """A project deleted by ``project.deleted`` (ids are never reused): files.parsed of it
    are dropped, so a late event of a finished scan cannot write the project back."""

    __tablename__ = "impact_deleted_projects"
    project_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
