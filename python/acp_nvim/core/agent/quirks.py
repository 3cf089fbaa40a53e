"""Agent-specific workarounds, all in this one place (``:help acp_nvim-agent-quirks``).

Everything else in acp.nvim handles agents by the shape of what they send. What lives here
cannot be: it answers one agent's known misreading of the protocol, keyed by the name the
agent gives in ``initialize`` (``agentInfo.name``).
"""

from __future__ import annotations

from acp import RequestError
from acp.schema import InitializeResponse

RESOURCE_NOT_FOUND = -32002

# Gemini CLI's write_file (and replace on a new file) first reads the target through
# fs/read_text_file and understands no error for a missing file (neither -32002 nor -32603):
# the tool fails and the file is never created. For it, a missing file inside the workspace
# reads as empty text, as several other clients answer. Paths outside the workspace are
# refused before this point, so confinement is unchanged.
_MISSING_FILE_READS_EMPTY = frozenset({"gemini-cli"})

# session/fork with a fork point (``_meta.jetbrains.air.fork``: a message id) keeps the conversation
# up to that message in claude-agent-acp (0.101, ``fork-session.js``). Other agents that offer
# session/fork ignore the _meta and copy the whole conversation (codex-acp 2.6 does), which would
# keep the turns a rewind takes back; no capability tells the two apart.
_FORKS_AT_A_MESSAGE = frozenset({"@agentclientprotocol/claude-agent-acp"})


def agent_name(info: InitializeResponse | None) -> str | None:
    """The agent's self-reported name from its ``InitializeResponse`` (None if unknown)."""
    agent = info.agent_info if info is not None else None
    return agent.name if agent is not None else None


def missing_file_reads_empty(info: InitializeResponse | None, error: RequestError) -> bool:
    """True when ``error`` (from reading a file) should be answered with empty text instead."""
    return error.code == RESOURCE_NOT_FOUND and agent_name(info) in _MISSING_FILE_READS_EMPTY


def forks_at_a_message(info: InitializeResponse | None) -> bool:
    """Whether the agent's session/fork keeps the conversation only up to a given message."""
    return agent_name(info) in _FORKS_AT_A_MESSAGE
