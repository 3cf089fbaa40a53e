"""The agent as a process: spawning it with the user's environment, the newline-delimited JSON
wire over its stdio (every line tapped for the log), draining its stderr, initializing it, and
ending it together with every process it started. Agent-specific workarounds live here too.
"""
