"""python -m locus.impact"""

from locus.impact.main import build
from locus.impact.settings import ImpactSettings
from locus.rpc import run_service


def main() -> None:
    run_service(build, ImpactSettings)


if __name__ == "__main__":
    main()
