"""Revision 0002: drop ``ix_impact_symbols_project`` (project_id), a prefix of
``ix_impact_symbols_project_name`` (project_id, qualified_name), which serves the same lookups.

impact_symbols is the projection's largest table and every files.parsed part rewrites a file's
rows, so each write maintained two indexes leading with project_id; now one. Rows are untouched.
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_impact_symbols_project", table_name="impact_symbols")


def downgrade() -> None:
    op.create_index("ix_impact_symbols_project", "impact_symbols", ["project_id"], unique=False)
