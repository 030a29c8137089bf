"""Revision 0002: git sources (credential names, polling, the last scanned commit) and the
commit each scan job read (``scan_job_commits``)."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.add_column(sa.Column("credential_file", sa.Text(), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("credential_env", sa.String(length=200), nullable=False, server_default="")
        )
        batch.add_column(
            sa.Column("poll_seconds", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("last_commit_sha", sa.String(length=64), nullable=False, server_default="")
        )
    op.create_table(
        "scan_job_commits",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("git_ref", sa.String(length=200), nullable=False),
        sa.Column("commit_sha", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "source_id"),
    )


def downgrade() -> None:
    op.drop_table("scan_job_commits")
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("last_commit_sha")
        batch.drop_column("poll_seconds")
        batch.drop_column("credential_env")
        batch.drop_column("credential_file")
