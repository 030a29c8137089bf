"""python -m locus.impact.migrate: upgrade the impact store to this code's schema revision,
at the database the service's settings name (`locus migrate` runs it for each installed service)."""

from locus.config import load_settings
from locus.database.migrations import run_migrate_command
from locus.impact.adapters.migrations import SCHEMA
from locus.impact.settings import ImpactSettings


def main() -> None:
    run_migrate_command(SCHEMA, load_settings(ImpactSettings).sqlalchemy_url("impact.db"))


if __name__ == "__main__":
    main()
