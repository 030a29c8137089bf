"""Adapters of the MCP server: the gateway client, protobuf mapping, the tools and HTTP."""
