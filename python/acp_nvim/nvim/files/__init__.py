"""Files and buffers: the EditorPort implementation, buffer copies kept by deltas, the MCP editor
tools, and :Ai changes."""
