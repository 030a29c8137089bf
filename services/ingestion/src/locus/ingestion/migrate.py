"""python -m locus.ingestion.migrate: upgrade the ingestion store to this code's schema revision,
at the database the service's settings name (`locus migrate` runs it for each installed service)."""

from locus.config import load_settings
from locus.database.migrations import run_migrate_command
from locus.ingestion.adapters.migrations import SCHEMA
from locus.ingestion.settings import IngestionSettings


def main() -> None:
    run_migrate_command(SCHEMA, load_settings(IngestionSettings).sqlalchemy_url("ingestion.db"))


if __name__ == "__main__":
    main()
