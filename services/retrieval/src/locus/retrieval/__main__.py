"""python -m locus.retrieval"""

from locus.retrieval.main import build
from locus.retrieval.settings import RetrievalSettings
from locus.rpc import run_service


def main() -> None:
    run_service(build, RetrievalSettings)


if __name__ == "__main__":
    main()
