"""The ingestion store's schema revisions (versions/, run by locus.database.migrations): a change to
tables.py ships with a revision that makes the same change to a deployed database."""

from pathlib import Path

from locus.database.migrations import StoreSchema

SCHEMA = StoreSchema(
    store="ingestion",
    scripts=Path(__file__).parent,
    first_revision_tables=frozenset(
        {
            "embedded_jobs",
            "files",
            "projects",
            "scan_job_file_stages",
            "scan_job_files",
            "scan_jobs",
            "scan_skipped_files",
            "sources",
        }
    ),
)
