"""python -m locus.impact"""

import asyncio

from locus.config import load_settings
from locus.impact.main import build
from locus.impact.settings import ImpactSettings


async def serve() -> None:
    # gRPC aio objects bind to the running loop, so the runtime is built inside it.
    await build(load_settings(ImpactSettings)).run()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
