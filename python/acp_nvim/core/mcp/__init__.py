"""MCP servers for the agent: the configured ones, and the editor itself as the MCP server ``nvim``.

``servers.py`` turns the configuration into ACP ``mcpServers`` per the agent's capabilities;
``editor_state.py`` is what the editor must answer; ``tools.py`` defines the editor's tools
(confined to the session's workspace, logged in its log); ``http_server.py`` serves them over
Streamable HTTP with the official MCP SDK; ``session_mcp.py`` is the one object a session holds.
"""
