"""python -m locus.gateway.migrate: upgrade the gateway store to this code's schema revision,
at the database the service's settings name (`locus migrate` runs it for each installed service)."""

from locus.config import load_settings
from locus.database.migrations import run_migrate_command
from locus.gateway.adapters.migrations import SCHEMA
from locus.gateway.settings import GatewaySettings


def main() -> None:
    run_migrate_command(SCHEMA, load_settings(GatewaySettings).sqlalchemy_url("gateway.db"))


if __name__ == "__main__":
    main()
