"""python -m locus.gateway"""

from locus.gateway.main import build
from locus.gateway.settings import GatewaySettings
from locus.rpc import run_service


def main() -> None:
    run_service(build, GatewaySettings)


if __name__ == "__main__":
    main()
