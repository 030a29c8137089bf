"""python -m locus.retrieval"""

import asyncio

from locus.config import load_settings
from locus.retrieval.main import build
from locus.retrieval.settings import RetrievalSettings


async def serve() -> None:
    # gRPC aio objects bind to the running loop, so the runtime is built inside it.
    await build(load_settings(RetrievalSettings)).run()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
