"""python -m locus.retrieval.migrate: upgrade the retrieval store to this code's schema revision,
at the database the service's settings name (`locus migrate` runs it for each installed service)."""

from locus.config import load_settings
from locus.database.migrations import run_migrate_command
from locus.retrieval.adapters.migrations import SCHEMA
from locus.retrieval.settings import RetrievalSettings


def main() -> None:
    run_migrate_command(SCHEMA, load_settings(RetrievalSettings).sqlalchemy_url("retrieval.db"))


if __name__ == "__main__":
    main()
