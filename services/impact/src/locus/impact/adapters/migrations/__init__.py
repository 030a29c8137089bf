"""The impact store's schema revisions (versions/, run by locus.database.migrations): a change to
tables.py ships with a revision that makes the same change to a deployed database."""

from pathlib import Path

from locus.database.migrations import StoreSchema

SCHEMA = StoreSchema(
    store="impact",
    scripts=Path(__file__).parent,
    first_revision_tables=frozenset(
        {
            "impact_dependencies",
            "impact_files",
            "impact_projects",
            "impact_relations",
            "impact_symbols",
        }
    ),
)
