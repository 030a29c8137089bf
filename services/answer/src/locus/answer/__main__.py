"""python -m locus.answer"""

from locus.answer.main import build
from locus.answer.settings import AnswerSettings
from locus.rpc import run_service


def main() -> None:
    run_service(build, AnswerSettings)


if __name__ == "__main__":
    main()
