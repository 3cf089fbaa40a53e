"""Fuzzing acp.nvim with hypothesis: generated ``session/update``, ``session/request_permission``
and ``fs/*`` payloads (schema-valid and not) and raw lines, replayed by an agent over real pipes
into the real host and renderer in a real Neovim.

Modules: ``schema`` (JSON schema → strategy), ``payloads`` (the strategies), ``agent/`` (the
replaying agent), ``harness`` (Neovim, batches, answering, health checks), ``findings`` (what
counts as a crash or an unhandled exception, and the known ones), ``minimize`` (shrinks a
failing payload), ``__main__`` (``make fuzz``: ≥ 10,000 cases, distinct findings reported).
"""
