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
        "impact_dependencies",
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("part_index", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=128), nullable=False),
        sa.Column("target_module", sa.Text(), nullable=False),
        sa.Column("target_file_id", sa.String(length=128), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("file_id", "part_index", "ordinal"),
    )
    op.create_index(
        "ix_impact_dependencies_project", "impact_dependencies", ["project_id"], unique=False
    )
    op.create_table(
        "impact_files",
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("project_id", sa.String(length=128), nullable=False),
        sa.Column("snapshot_id", sa.String(length=128), nullable=False),
        sa.Column("snapshot_seq", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("module_name", sa.Text(), nullable=False),
        sa.Column("language", sa.String(length=40), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("part_count", sa.Integer(), nullable=False),
        sa.Column("parts_done", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("file_id"),
    )
    op.create_index("ix_impact_files_project_id", "impact_files", ["project_id"], unique=False)
    op.create_table(
        "impact_projects",
        sa.Column("project_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("project_id"),
    )
    op.create_table(
        "impact_relations",
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("part_index", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("source_node_id", sa.String(length=128), nullable=False),
        sa.Column("source_qualified_name", sa.Text(), nullable=False),
        sa.Column("target_name", sa.Text(), nullable=False),
        sa.Column("target_qualified_name", sa.Text(), nullable=False),
        sa.Column("target_node_id", sa.String(length=128), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("file_id", "part_index", "ordinal"),
    )
    op.create_index("ix_impact_relations_project", "impact_relations", ["project_id"], unique=False)
    op.create_table(
        "impact_symbols",
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("part_index", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=128), nullable=False),
        sa.Column("node_id", sa.String(length=128), nullable=False),
        sa.Column("qualified_name", sa.Text(), nullable=False),
        sa.Column("scope_name", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("language", sa.String(length=40), nullable=False),
        sa.Column("snapshot_id", sa.String(length=128), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("docstring", sa.Text(), nullable=False),
        sa.Column("parent_node_id", sa.String(length=128), nullable=False),
        sa.Column("parent_qualified_name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("file_id", "part_index", "ordinal"),
    )
    op.create_index("ix_impact_symbols_project", "impact_symbols", ["project_id"], unique=False)
    op.create_index(
        "ix_impact_symbols_project_name",
        "impact_symbols",
        ["project_id", "qualified_name"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_table("impact_symbols")
    op.drop_table("impact_relations")
    op.drop_table("impact_projects")
    op.drop_table("impact_files")
    op.drop_table("impact_dependencies")
