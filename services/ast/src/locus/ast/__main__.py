"""python -m locus.ast"""

import asyncio

from locus.ast.main import build
from locus.ast.settings import AstSettings
from locus.config import load_settings


async def serve() -> None:
    # gRPC aio objects bind to the running loop, so the runtime is built inside it.
    await build(load_settings(AstSettings)).run()


def main() -> None:
    asyncio.run(serve())


if __name__ == "__main__":
    main()
