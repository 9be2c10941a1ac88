"""The MCP server (``lexpipe mcp``): the shared tool definitions of :mod:`pipelines.tools` and each
act's table of contents, over stdio or streamable HTTP; read-only."""

from lexpipe.mcp.server import build_server, run

__all__ = ["build_server", "run"]
