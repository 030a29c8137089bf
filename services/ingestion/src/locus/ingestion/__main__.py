"""python -m locus.ingestion"""

import asyncio

from locus.config import load_settings
from locus.ingestion.main import build
from locus.ingestion.settings import IngestionSettings


async def serve() -> None:
    # gRPC aio objects bind to the running loop, so the runtime is built inside it.
    await build(load_settings(IngestionSettings)).run()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
