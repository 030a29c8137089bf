"""Revision 0001: the store's tables exactly as ``create_all`` made them before migrations
existed (a database made then is stamped at this revision, then upgraded from it)."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateway_requests",
        sa.Column("request_id", sa.String(length=160), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("project_ref", sa.String(length=200), nullable=False),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("project_name", sa.String(length=200), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error_code", sa.String(length=40), nullable=False),
        sa.Column("error_message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("latency_ms", sa.BigInteger(), nullable=False),
        sa.Column("timings", sa.Text(), nullable=False),
        sa.Column("snapshot_id", sa.String(length=64), nullable=False),
        sa.Column("trace_id", sa.String(length=32), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=False),
        sa.Column("answer_text", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("request_id"),
    )
    op.create_index(
        "ix_gateway_requests_created",
        "gateway_requests",
        ["created_at", "request_id"],
        unique=False,
    )
    op.create_index(
        "ix_gateway_requests_name_created",
        "gateway_requests",
        ["project_name", "created_at"],
        unique=False,
    )
    op.create_index(
        "ix_gateway_requests_project_created",
        "gateway_requests",
        ["project_id", "created_at"],
        unique=False,
    )
    op.create_index(
        "ix_gateway_requests_ref_created",
        "gateway_requests",
        ["project_ref", "created_at"],
        unique=False,
    )
    op.create_index(
        "ix_gateway_requests_status_created",
        "gateway_requests",
        ["status", "created_at"],
        unique=False,
    )
    op.create_table(
        "gateway_artifacts",
        sa.Column("request_id", sa.String(length=160), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("chunk_id", sa.String(length=128), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["gateway_requests.request_id"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("request_id", "kind", "ordinal"),
    )
    op.create_table(
        "gateway_feedback",
        sa.Column("feedback_id", sa.String(length=40), nullable=False),
        sa.Column("request_id", sa.String(length=160), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["gateway_requests.request_id"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("feedback_id"),
    )
    op.create_index(
        "ix_gateway_feedback_request_id", "gateway_feedback", ["request_id"], unique=False
    )


def downgrade() -> None:
    op.drop_table("gateway_feedback")
    op.drop_table("gateway_artifacts")
    op.drop_table("gateway_requests")
