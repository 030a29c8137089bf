"""Locus MCP server: the gateway's public API as tools for coding agents (stdio and Streamable
HTTP), an adapter over the gateway, never around it."""
