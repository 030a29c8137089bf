"""python -m locus.mcp.call URL TOOL [JSON_ARGUMENTS]: call one tool of a Locus MCP server over
Streamable HTTP, as a coding agent would, and print its structured result (JSON). The bearer
credential is LOCUS_API_KEY or the file LOCUS_API_KEY_FILE names. Exit 1 on a tool error, 2
on arguments that are no JSON object, 3 when the server does not answer."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from locus.config import SettingsError, load_settings
from locus.mcp.adapters.gateway_client import authorization_value
from locus.mcp.settings import McpSettings


async def call_tool(url: str, tool: str, arguments: dict[str, Any], credential: str) -> Any:
    """The tool's result: (is_error, structured content or the error text)."""
    headers = {"Authorization": authorization_value(credential)} if credential else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(300, connect=10)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, arguments)
    if result.is_error:  # type: ignore[union-attr]
        return True, " ".join(getattr(c, "text", "") for c in result.content)  # type: ignore[union-attr]
    return False, result.structured_content  # type: ignore[union-attr]


def write_json(result: Any) -> None:
    """Print ``result`` as indented JSON. A reader that stops early (`| head`) has what it
    wanted: that is no error, and no traceback is printed."""
    try:
        print(json.dumps(result, indent=2), flush=True)
    except BrokenPipeError:
        # Python would report the broken pipe again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _cause(error: BaseException) -> str:
    """The innermost reason of ``error`` (the client's task groups wrap a refused connection
    in ExceptionGroups): ``ConnectError: All connection attempts failed``."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m locus.mcp.call", description=__doc__)
    parser.add_argument("url", help="the MCP endpoint, e.g. http://127.0.0.1:50056/mcp")
    parser.add_argument("tool", help="locate, search, read_file, ask, ...")
    parser.add_argument("arguments", nargs="?", default="{}", help="the arguments as JSON")
    arguments = parser.parse_args()
    try:
        credential = load_settings(McpSettings).stdio_credential()
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    try:
        tool_arguments = json.loads(arguments.arguments)
    except json.JSONDecodeError as error:
        parser.error(f"the arguments are no JSON ({error}): {arguments.arguments!r}")
    if not isinstance(tool_arguments, dict):
        parser.error(f"the arguments must be a JSON object, not {arguments.arguments!r}")
    try:
        failed, result = asyncio.run(
            call_tool(arguments.url, arguments.tool, tool_arguments, credential)
        )
    except Exception as error:  # httpx, anyio and task groups' ExceptionGroups alike: one line
        print(f"error: no answer from {arguments.url}: {_cause(error)}", file=sys.stderr)
        sys.exit(3)
    if failed:
        print(f"error: {result}", file=sys.stderr)
        sys.exit(1)
    write_json(result)


if __name__ == "__main__":
    main()
