"""Session states for Lua as what changed since the last one sent.

A session's state (``App.describe``) is a table of about thirty fields, and an agent's slash
commands make it several kilobytes. Most new states differ from the last in one or two fields (a
token count, a turn counter), but twenty turns that end together sent twenty whole states in one
flush: 74 KB that the host took 5 ms to encode and Neovim to decode, while the chats waited for
their last lines. So a state goes whole the first time, and after that only its changed fields
go, marked ``partial``; ``lua/acp_nvim/state/init.lua`` lays them over the state it keeps.
"""

from __future__ import annotations

from typing import Any

PARTIAL = "partial"
"""The field that marks a state holding only what changed (never a field of a state itself)."""


class SentStates:
    """The last state sent for each session, to send the next one as its changes."""

    def __init__(self) -> None:
        self._sent: dict[str, dict[str, Any]] = {}

    def changes(self, key: str, state: dict[str, Any]) -> dict[str, Any] | None:
        """What Lua needs of session ``key``'s new ``state``: all of it the first time, when it
        is closed, or when its set of fields changed; else its changed fields with ``partial``
        set; None when nothing changed."""
        last = self._sent.get(key)
        if state.get("closed"):
            self._sent.pop(key, None)
            return state
        self._sent[key] = state
        if last is None or last.keys() != state.keys():
            return state
        changed = {name: value for name, value in state.items() if last[name] != value}
        if not changed:
            return None
        changed[PARTIAL] = True
        return changed
