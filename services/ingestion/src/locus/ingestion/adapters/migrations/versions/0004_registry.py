"""Revision 0004: the registry as entities. ``systems`` and ``subsystems`` tables; a project
refers to at most one subsystem (``projects.subsystem_id``) instead of carrying free-text
``system``/``subsystem`` labels. Every distinct pair of existing labels becomes a system and a
subsystem (a missing half is named "default"), and its projects point at it: no label is lost.
A source being removed (RemoveSource) is marked ``sources.removing``.

The label columns are dropped with a plain ``ALTER TABLE ... DROP COLUMN`` (SQLite 3.35+ and
PostgreSQL): batch mode would copy and drop ``projects``, and with SQLite's foreign keys on that
drop would cascade into ``sources``."""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

DEFAULT_NAME = "default"  # the system or subsystem of a project that had only the other label


def _id(prefix: str, *parts: str) -> str:
    """A deterministic id for a migrated entity (a rerun on a copy makes the same ids)."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return f"{prefix}_{digest[:20]}"


def upgrade() -> None:
    op.create_table(
        "systems",
        sa.Column("system_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("system_id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "subsystems",
        sa.Column("subsystem_id", sa.String(length=40), nullable=False),
        sa.Column("system_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["system_id"], ["systems.system_id"]),
        sa.PrimaryKeyConstraint("subsystem_id"),
        sa.UniqueConstraint("system_id", "name"),
    )
    connection = op.get_bind()
    if connection.dialect.name == "sqlite":
        # SQLite adds a column with a foreign key only inline (and only with a NULL default).
        op.execute(
            "ALTER TABLE projects ADD COLUMN subsystem_id VARCHAR(40) "
            "REFERENCES subsystems (subsystem_id)"
        )
    else:
        op.add_column("projects", sa.Column("subsystem_id", sa.String(length=40), nullable=True))
        op.create_foreign_key(
            "projects_subsystem_id_fkey",
            "projects",
            "subsystems",
            ["subsystem_id"],
            ["subsystem_id"],
        )
    op.create_index("ix_projects_subsystem_id", "projects", ["subsystem_id"], unique=False)
    _labels_to_entities(connection)
    with op.batch_alter_table("sources") as batch:
        batch.add_column(
            sa.Column("removing", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.execute("ALTER TABLE projects DROP COLUMN system")
    op.execute("ALTER TABLE projects DROP COLUMN subsystem")


def _labels_to_entities(connection: sa.Connection) -> None:
    projects = sa.table(
        "projects",
        sa.column("project_id", sa.String),
        sa.column("system", sa.String),
        sa.column("subsystem", sa.String),
        sa.column("subsystem_id", sa.String),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    systems = sa.table(
        "systems",
        sa.column("system_id", sa.String),
        sa.column("name", sa.String),
        sa.column("description", sa.Text),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    subsystems = sa.table(
        "subsystems",
        sa.column("subsystem_id", sa.String),
        sa.column("system_id", sa.String),
        sa.column("name", sa.String),
        sa.column("description", sa.Text),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    rows = connection.execute(
        sa.select(projects.c.system, projects.c.subsystem, sa.func.min(projects.c.created_at))
        .where(sa.or_(projects.c.system != "", projects.c.subsystem != ""))
        .group_by(projects.c.system, projects.c.subsystem)
    ).all()
    made_systems: dict[str, str] = {}
    for system_label, subsystem_label, first_created in rows:
        system_name = system_label.strip() or DEFAULT_NAME
        subsystem_name = subsystem_label.strip() or DEFAULT_NAME
        system_id = made_systems.get(system_name)
        if system_id is None:
            system_id = made_systems[system_name] = _id("sys", system_name)
            connection.execute(
                sa.insert(systems).values(
                    system_id=system_id,
                    name=system_name,
                    description="made from the projects' system label",
                    created_at=first_created,
                )
            )
        subsystem_id = _id("sub", system_name, subsystem_name)
        if (
            connection.execute(
                sa.select(subsystems.c.subsystem_id).where(
                    subsystems.c.subsystem_id == subsystem_id
                )
            ).first()
            is None
        ):
            connection.execute(
                sa.insert(subsystems).values(
                    subsystem_id=subsystem_id,
                    system_id=system_id,
                    name=subsystem_name,
                    description="made from the projects' subsystem label",
                    created_at=first_created,
                )
            )
        connection.execute(
            sa.update(projects)
            .where(projects.c.system == system_label, projects.c.subsystem == subsystem_label)
            .values(subsystem_id=subsystem_id)
        )


def downgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("removing")
    op.execute("ALTER TABLE projects ADD COLUMN system VARCHAR(100) NOT NULL DEFAULT ''")
    op.execute("ALTER TABLE projects ADD COLUMN subsystem VARCHAR(100) NOT NULL DEFAULT ''")
    op.execute(
        "UPDATE projects SET "
        "subsystem = (SELECT name FROM subsystems "
        "WHERE subsystems.subsystem_id = projects.subsystem_id), "
        "system = (SELECT systems.name FROM subsystems JOIN systems "
        "ON systems.system_id = subsystems.system_id "
        "WHERE subsystems.subsystem_id = projects.subsystem_id) "
        "WHERE subsystem_id IS NOT NULL"
    )
    op.drop_index("ix_projects_subsystem_id", table_name="projects")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("subsystem_id")
    op.drop_table("subsystems")
    op.drop_table("systems")
