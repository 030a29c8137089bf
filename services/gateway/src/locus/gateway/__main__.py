"""python -m locus.gateway"""

import asyncio

from locus.config import load_settings
from locus.gateway.main import build
from locus.gateway.settings import GatewaySettings


async def serve() -> None:
    # gRPC aio objects bind to the running loop, so the runtime is built inside it.
    await build(load_settings(GatewaySettings)).run()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
