"""python -m locus.answer"""

import asyncio

from locus.answer.main import build
from locus.answer.settings import AnswerSettings
from locus.config import load_settings


async def serve() -> None:
    # gRPC aio objects bind to the running loop, so the runtime is built inside it.
    await build(load_settings(AnswerSettings)).run()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
