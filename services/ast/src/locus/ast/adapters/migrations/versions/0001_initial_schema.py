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
        "ast_chunks",
        sa.Column("chunk_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("symbol_node_id", sa.String(length=40), nullable=False),
        sa.Column("symbol_qualified_name", sa.Text(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("chunk_id"),
    )
    op.create_index("ix_ast_chunks_file_id", "ast_chunks", ["file_id"], unique=False)
    op.create_index("ix_ast_chunks_project_id", "ast_chunks", ["project_id"], unique=False)
    op.create_table(
        "ast_file_dependencies",
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("target_module", sa.Text(), nullable=False),
        sa.Column("imported_names", sa.Text(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("file_id", "ordinal"),
    )
    op.create_index(
        "ix_ast_file_dependencies_project_module",
        "ast_file_dependencies",
        ["project_id", "target_module"],
        unique=False,
    )
    op.create_table(
        "ast_files",
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=40), nullable=False),
        sa.Column("module_name", sa.Text(), nullable=False),
        sa.Column("snapshot_id", sa.String(length=40), nullable=False),
        sa.Column("snapshot_seq", sa.BigInteger(), nullable=False),
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("unsupported_language", sa.Boolean(), nullable=False),
        sa.Column("parse_errors", sa.Integer(), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("file_id"),
    )
    op.create_index(
        "ix_ast_files_project_module", "ast_files", ["project_id", "module_name"], unique=False
    )
    op.create_index(
        "ix_ast_files_project_path", "ast_files", ["project_id", "relative_path"], unique=False
    )
    op.create_table(
        "ast_relations",
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("source_node_id", sa.String(length=40), nullable=False),
        sa.Column("source_qualified_name", sa.Text(), nullable=False),
        sa.Column("target_name", sa.Text(), nullable=False),
        sa.Column("target_qualified_name", sa.Text(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("file_id", "ordinal"),
    )
    op.create_index(
        "ix_ast_relations_project_target",
        "ast_relations",
        ["project_id", "target_qualified_name"],
        unique=False,
    )
    op.create_index(
        "ix_ast_relations_source_node_id", "ast_relations", ["source_node_id"], unique=False
    )
    op.create_table(
        "ast_symbols",
        sa.Column("node_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("file_id", sa.String(length=40), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("qualified_name", sa.Text(), nullable=False),
        sa.Column("qualified_name_lower", sa.Text(), nullable=False),
        sa.Column("scope_name", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("name_lower", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("docstring", sa.Text(), nullable=False),
        sa.Column("parent_node_id", sa.String(length=40), nullable=False),
        sa.Column("parent_qualified_name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("node_id"),
    )
    op.create_index("ix_ast_symbols_file_id", "ast_symbols", ["file_id"], unique=False)
    op.create_index(
        "ix_ast_symbols_parent_node_id", "ast_symbols", ["parent_node_id"], unique=False
    )
    op.create_index(
        "ix_ast_symbols_project_name_lower",
        "ast_symbols",
        ["project_id", "name_lower"],
        unique=False,
    )
    op.create_index(
        "ix_ast_symbols_project_qualified",
        "ast_symbols",
        ["project_id", "qualified_name"],
        unique=False,
    )
    op.create_index(
        "ix_ast_symbols_project_qualified_lower",
        "ast_symbols",
        ["project_id", "qualified_name_lower"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_table("ast_symbols")
    op.drop_table("ast_relations")
    op.drop_table("ast_files")
    op.drop_table("ast_file_dependencies")
    op.drop_table("ast_chunks")
