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
        "embedded_jobs",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("embedded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.create_table(
        "files",
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=40), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("snapshot_id", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("file_id"),
    )
    op.create_index("ix_files_project_id", "files", ["project_id"], unique=False)
    op.create_index("ix_files_project_path", "files", ["project_id", "relative_path"], unique=False)
    op.create_index("ix_files_source_id", "files", ["source_id"], unique=False)
    op.create_table(
        "projects",
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("system", sa.String(length=100), nullable=False),
        sa.Column("subsystem", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("latest_snapshot_id", sa.String(length=40), nullable=False),
        sa.Column("last_snapshot_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("project_id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "scan_job_file_stages",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("stage", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "file_id", "stage"),
    )
    op.create_table(
        "scan_job_files",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("change_type", sa.String(length=10), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("previous_sha256", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=40), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("batch_index", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "file_id"),
    )
    op.create_table(
        "scan_jobs",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("snapshot_id", sa.String(length=40), nullable=False),
        sa.Column("snapshot_seq", sa.BigInteger(), nullable=False),
        sa.Column("source_ids", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("files_seen", sa.BigInteger(), nullable=False),
        sa.Column("files_skipped", sa.BigInteger(), nullable=False),
        sa.Column("files_added", sa.BigInteger(), nullable=False),
        sa.Column("files_modified", sa.BigInteger(), nullable=False),
        sa.Column("files_deleted", sa.BigInteger(), nullable=False),
        sa.Column("files_unchanged", sa.BigInteger(), nullable=False),
        sa.Column("bytes_read", sa.BigInteger(), nullable=False),
        sa.Column("batches", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("job_id"),
    )
    op.create_index("ix_scan_jobs_project_id", "scan_jobs", ["project_id"], unique=False)
    op.create_index("ix_scan_jobs_state", "scan_jobs", ["state"], unique=False)
    op.create_table(
        "scan_skipped_files",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("reason", sa.String(length=40), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "source_id", "relative_path"),
    )
    op.create_table(
        "sources",
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("git_url", sa.Text(), nullable=False),
        sa.Column("git_ref", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.project_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("source_id"),
        sa.UniqueConstraint("project_id", "path", "git_url", "git_ref"),
    )


def downgrade() -> None:
    op.drop_table("sources")
    op.drop_table("scan_skipped_files")
    op.drop_table("scan_jobs")
    op.drop_table("scan_job_files")
    op.drop_table("scan_job_file_stages")
    op.drop_table("projects")
    op.drop_table("files")
    op.drop_table("embedded_jobs")
