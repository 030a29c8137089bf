"""Revision 0002: ``ast_deleted_projects``, a tombstone per project deleted by
``project.deleted``, so a late files.changed of the project writes nothing (no rows change)."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ast_deleted_projects",
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("project_id"),
    )


def downgrade() -> None:
    op.drop_table("ast_deleted_projects")
