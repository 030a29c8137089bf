"""Relational schema of the ast store (SQLite by default, PostgreSQL in production).

Every row of a file carries its ``file_id``: replacing or retracting a file deletes by that key
and inserts the new rows in the same transaction. Relation targets are stored as written and as
a dotted ``target_qualified_name``; which node that name denotes is resolved when read (see
``store.py``), so a target file that arrives, changes or disappears later is always reflected.
A deleted project keeps a tombstone (``ast_deleted_projects``), so a late event writes nothing.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class FileRow(Base):
    """The latest version of a file this service saw; ``deleted`` rows are tombstones that keep
    ``snapshot_seq`` so an older, late event cannot bring the file back."""

    __tablename__ = "ast_files"
    __table_args__ = (
        Index("ix_ast_files_project_path", "project_id", "relative_path"),
        Index("ix_ast_files_project_module", "project_id", "module_name"),
    )
    file_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    source_id: Mapped[str] = mapped_column(String(40), default="")
    relative_path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64), default="")
    language: Mapped[str] = mapped_column(String(40), default="")
    module_name: Mapped[str] = mapped_column(Text, default="")
    snapshot_id: Mapped[str] = mapped_column(String(40))
    snapshot_seq: Mapped[int] = mapped_column(BigInteger)
    job_id: Mapped[str] = mapped_column(String(40), default="")
    unsupported_language: Mapped[bool] = mapped_column(Boolean, default=False)
    parse_errors: Mapped[int] = mapped_column(Integer, default=0)
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)


class SymbolRow(Base):
    """A module, class, function or method; ``node_id`` = hash(file_id, qualified_name, kind)."""

    __tablename__ = "ast_symbols"
    __table_args__ = (
        Index("ix_ast_symbols_project_qualified", "project_id", "qualified_name"),
        Index("ix_ast_symbols_project_name_lower", "project_id", "name_lower"),
        Index("ix_ast_symbols_project_qualified_lower", "project_id", "qualified_name_lower"),
    )
    node_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    file_id: Mapped[str] = mapped_column(String(40), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)  # order of extraction within the file
    qualified_name: Mapped[str] = mapped_column(Text)
    qualified_name_lower: Mapped[str] = mapped_column(Text)
    scope_name: Mapped[str] = mapped_column(Text, default="")
    name: Mapped[str] = mapped_column(Text)
    name_lower: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))
    start_line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    signature: Mapped[str] = mapped_column(Text, default="")
    docstring: Mapped[str] = mapped_column(Text, default="")
    parent_node_id: Mapped[str] = mapped_column(String(40), default="", index=True)
    parent_qualified_name: Mapped[str] = mapped_column(Text, default="")


class RelationRow(Base):
    """An edge from a symbol of ``file_id``; the target node is resolved by qualified name."""

    __tablename__ = "ast_relations"
    __table_args__ = (
        Index("ix_ast_relations_project_target", "project_id", "target_qualified_name"),
    )
    file_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    kind: Mapped[str] = mapped_column(String(16))
    source_node_id: Mapped[str] = mapped_column(String(40), index=True)
    source_qualified_name: Mapped[str] = mapped_column(Text)
    target_name: Mapped[str] = mapped_column(Text)
    target_qualified_name: Mapped[str] = mapped_column(Text, default="")  # "" = unknown
    line: Mapped[int] = mapped_column(Integer)


class FileDependencyRow(Base):
    """A module imported by ``file_id`` (``imported_names`` newline-separated)."""

    __tablename__ = "ast_file_dependencies"
    __table_args__ = (
        Index("ix_ast_file_dependencies_project_module", "project_id", "target_module"),
    )
    file_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    target_module: Mapped[str] = mapped_column(Text)
    imported_names: Mapped[str] = mapped_column(Text, default="")
    line: Mapped[int] = mapped_column(Integer)


class ChunkRow(Base):
    """A retrievable piece of a file; ``chunk_id`` = hash(file_id, ordinal, content_sha256)."""

    __tablename__ = "ast_chunks"
    chunk_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40), index=True)
    file_id: Mapped[str] = mapped_column(String(40), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    symbol_node_id: Mapped[str] = mapped_column(String(40), default="")
    symbol_qualified_name: Mapped[str] = mapped_column(Text, default="")
    start_line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))


class DeletedProjectRow(Base):
    """A project deleted by ``project.deleted`` (ids are never reused): files.changed of it
    are dropped, so a late event of a finished scan cannot write the project back."""

    __tablename__ = "ast_deleted_projects"
    project_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
