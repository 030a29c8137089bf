"""python -m locus.ingestion"""

from locus.ingestion.main import build
from locus.ingestion.settings import IngestionSettings
from locus.rpc import run_service


def main() -> None:
    run_service(build, IngestionSettings)


if __name__ == "__main__":
    main()
