"""python -m locus.mcp: the Streamable HTTP server; ``--stdio``: one client on stdin/stdout,
calling with LOCUS_API_KEY / LOCUS_API_KEY_FILE (what ``locus mcp`` runs). Either calls the
gateway over TLS when the stack's LOCUS_TLS_* files are set."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from locus.config import CredentialSettings, SettingsError, load_settings
from locus.mcp.main import build
from locus.mcp.settings import McpSettings


async def _serve(stdio: bool) -> None:
    settings = load_settings(McpSettings)
    credentials = load_settings(CredentialSettings)
    if stdio:
        runtime = build(
            settings, credentials=credentials, stdio_credential=settings.stdio_credential()
        )
        await runtime.serve_stdio()
    else:
        # uvicorn stops on SIGTERM, then raises the signal again: with the default handler the
        # process would die before close() flushes its spans; this one lets it finish.
        signal.signal(signal.SIGTERM, lambda number, frame: None)
        await build(settings, credentials=credentials).serve_http()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m locus.mcp", description=__doc__)
    parser.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout")
    arguments = parser.parse_args()
    try:
        asyncio.run(_serve(arguments.stdio))
    except SettingsError as error:
        print(f"locus.mcp: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
