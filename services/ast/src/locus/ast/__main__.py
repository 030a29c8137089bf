"""python -m locus.ast"""

from locus.ast.main import build
from locus.ast.settings import AstSettings
from locus.rpc import run_service


def main() -> None:
    run_service(build, AstSettings)


if __name__ == "__main__":
    main()
