"""Revision 0003: knowledge documents from outside the repositories (``knowledge_documents``),
the files of each project's documents source."""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "knowledge_documents",
        sa.Column("document_id", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.String(length=40), nullable=False),
        sa.Column("source_id", sa.String(length=40), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("relative_path", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("document_id"),
    )
    op.create_index(
        "ix_knowledge_documents_project_id", "knowledge_documents", ["project_id"], unique=False
    )
    op.create_index(
        "ix_knowledge_documents_project_path",
        "knowledge_documents",
        ["project_id", "relative_path"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("ix_knowledge_documents_project_path", table_name="knowledge_documents")
    op.drop_index("ix_knowledge_documents_project_id", table_name="knowledge_documents")
    op.drop_table("knowledge_documents")
