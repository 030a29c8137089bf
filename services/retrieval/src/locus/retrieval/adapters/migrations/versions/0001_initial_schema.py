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
        "embedding_cache",
        sa.Column("model_id", sa.String(length=200), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("model_id", "content_sha256"),
    )
    op.create_table(
        "file_states",
        sa.Column("file_id", sa.String(length=100), nullable=False),
        sa.Column("project_id", sa.String(length=100), nullable=False),
        sa.Column("snapshot_seq", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("part_count", sa.Integer(), nullable=False),
        sa.Column("parts_done", sa.Text(), nullable=False),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("file_id"),
    )
    op.create_index("ix_file_states_project_id", "file_states", ["project_id"], unique=False)
    op.create_table(
        "snapshots",
        sa.Column("snapshot_id", sa.String(length=100), nullable=False),
        sa.Column("project_id", sa.String(length=100), nullable=False),
        sa.Column("snapshot_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("snapshot_id"),
    )
    op.create_index("ix_snapshots_project_id", "snapshots", ["project_id"], unique=False)
    op.create_table(
        "vector_parts",
        sa.Column("file_id", sa.String(length=100), nullable=False),
        sa.Column("part_index", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("snapshot_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("file_id", "part_index"),
    )


def downgrade() -> None:
    op.drop_table("vector_parts")
    op.drop_table("snapshots")
    op.drop_table("file_states")
    op.drop_table("embedding_cache")
