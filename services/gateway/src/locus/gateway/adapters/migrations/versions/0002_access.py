"""Revision 0002: who asked (``gateway_requests.principal``) and the API keys table."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("gateway_requests") as batch:
        batch.add_column(
            sa.Column("principal", sa.String(length=300), nullable=False, server_default="")
        )
        batch.create_index(
            "ix_gateway_requests_principal_created", ["principal", "created_at"], unique=False
        )
    op.create_table(
        "gateway_api_keys",
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("grants", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=300), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key_id"),
    )


def downgrade() -> None:
    op.drop_table("gateway_api_keys")
    with op.batch_alter_table("gateway_requests") as batch:
        batch.drop_index("ix_gateway_requests_principal_created")
        batch.drop_column("principal")
