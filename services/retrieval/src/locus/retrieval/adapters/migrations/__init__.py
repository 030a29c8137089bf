"""The retrieval store's schema revisions (versions/, run by locus.database.migrations): a change to
tables.py ships with a revision that makes the same change to a deployed database."""

from pathlib import Path

from locus.database.migrations import StoreSchema

SCHEMA = StoreSchema(
    store="retrieval",
    scripts=Path(__file__).parent,
    first_revision_tables=frozenset(
        {"embedding_cache", "file_states", "snapshots", "vector_parts"}
    ),
)
