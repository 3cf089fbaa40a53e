"""A stdio MCP server for the real-agent tests: one tool, ``reveal``, that says whether the
environment acp.nvim configured for it arrived (``PROBE_TOKEN``), without echoing the value."""

from __future__ import annotations

import os

from mcp.server import MCPServer

EXPECTED = "tok-probe-5d4c3b2a1908"

server = MCPServer("probe", log_level="ERROR")


@server.tool()
def reveal(what: str = "") -> str:
    """Tell whether the configured environment reached this server."""
    return "probe-env-ok" if os.environ.get("PROBE_TOKEN") == EXPECTED else "probe-env-missing"


if __name__ == "__main__":
    server.run("stdio")
