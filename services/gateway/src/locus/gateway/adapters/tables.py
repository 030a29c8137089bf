"""Relational schema of the gateway's store (SQLite by default, PostgreSQL in production): the
request log (requests with their final responses, artifacts, feedback) and the API keys."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class RequestRow(Base):
    __tablename__ = "gateway_requests"
    __table_args__ = (
        Index("ix_gateway_requests_created", "created_at", "request_id"),
        Index("ix_gateway_requests_project_created", "project_id", "created_at"),
        Index("ix_gateway_requests_ref_created", "project_ref", "created_at"),
        Index("ix_gateway_requests_name_created", "project_name", "created_at"),
        Index("ix_gateway_requests_status_created", "status", "created_at"),
        Index("ix_gateway_requests_principal_created", "principal", "created_at"),
    )
    request_id: Mapped[str] = mapped_column(String(160), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    project_ref: Mapped[str] = mapped_column(String(200), default="")
    project_id: Mapped[str] = mapped_column(String(64), default="")
    project_name: Mapped[str] = mapped_column(String(200), default="")
    question: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16))
    error_code: Mapped[str] = mapped_column(String(40), default="")
    error_message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    latency_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    timings: Mapped[str] = mapped_column(Text, default="{}")  # JSON: stage → milliseconds
    snapshot_id: Mapped[str] = mapped_column(String(64), default="")
    trace_id: Mapped[str] = mapped_column(String(32), default="")
    response: Mapped[bytes] = mapped_column(LargeBinary, default=b"")
    answer_text: Mapped[str] = mapped_column(Text, default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    # Who asked: "key:<key id>" or "oidc:<subject>" (empty for requests recorded before 0002).
    principal: Mapped[str] = mapped_column(String(300), default="", server_default="")


class ArtifactRow(Base):
    __tablename__ = "gateway_artifacts"
    request_id: Mapped[str] = mapped_column(
        ForeignKey("gateway_requests.request_id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    chunk_id: Mapped[str] = mapped_column(String(128), default="")
    relative_path: Mapped[str] = mapped_column(Text, default="")
    start_line: Mapped[int] = mapped_column(Integer, default=0)
    end_line: Mapped[int] = mapped_column(Integer, default=0)
    score: Mapped[float] = mapped_column(Float, default=0.0)
    payload: Mapped[bytes] = mapped_column(LargeBinary, default=b"")


class FeedbackRow(Base):
    __tablename__ = "gateway_feedback"
    feedback_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    request_id: Mapped[str] = mapped_column(
        ForeignKey("gateway_requests.request_id", ondelete="CASCADE"), index=True
    )
    rating: Mapped[int] = mapped_column(Integer)
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApiKeyRow(Base):
    """An API key: its secret only as a SHA-256, its grants as JSON (["reader:shop", ...])."""

    __tablename__ = "gateway_api_keys"
    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    owner: Mapped[str] = mapped_column(String(200), default="")
    secret_hash: Mapped[str] = mapped_column(String(64))
    grants: Mapped[str] = mapped_column(Text, default="[]")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[str] = mapped_column(String(300), default="")
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
