"""python -m locus.ast.migrate: upgrade the ast store to this code's schema revision,
at the database the service's settings name (`locus migrate` runs it for each installed service)."""

from locus.ast.adapters.migrations import SCHEMA
from locus.ast.settings import AstSettings
from locus.config import load_settings
from locus.database.migrations import run_migrate_command


def main() -> None:
    run_migrate_command(SCHEMA, load_settings(AstSettings).sqlalchemy_url("ast.db"))


if __name__ == "__main__":
    main()
