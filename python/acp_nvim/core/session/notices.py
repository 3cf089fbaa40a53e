"""What the chat says when an agent fails, hangs, ignores a cancel or comes back.

Every notice about a stuck or dead agent names the way back: the chat's restart key (and
``:Ai restart``). The agent's own words (its stderr) are redacted before they get here.
"""

from __future__ import annotations

from ..connection.reattach import RELOADED, RESUMED
from ..conversation.queue import not_sent as not_sent
from ..conversation.queue import preview as preview

HOW = {RESUMED: "resumed the session (session/resume)", RELOADED: "reloaded the session (session/load)"}


def way_back(key: str) -> str:
    """How to restart: the chat's key (``keymaps.restart``; '' when disabled) and ``:Ai restart``."""
    if not key:
        return ":Ai restart restarts the agent and reopens this session"
    return f"{key} restarts the agent (after asking) and reopens this session (or :Ai restart)"


def slow(method: str, waited: float, limit: float, key: str) -> str:
    return (f"no answer to {method} after {waited:g} s; still waiting (up to {limit:g} s). "
            f"{way_back(key)}; :Ai log shows what the agent said")


def silent(waited: float, key: str) -> str:
    return (f"no output from the agent for {waited:.0f} s and no tool is running: it may be thinking, or hung. "
            f":Ai cancel ends the turn; {way_back(key)}")


def exited(summary: str, tail: list[str], running: bool, key: str) -> str:
    """The crash notice: what happened, the agent's last stderr lines, the way back."""
    lines = [f"{summary}{' during the turn' if running else ''}."]
    if tail:
        lines += ["Its last lines on stderr:", *(f"  │ {line}" for line in tail)]
    lines.append(f"{way_back(key)}; sending a prompt restarts it too. :Ai log shows more.")
    return "\n".join(lines)


def ignores_cancel(waited: float, key: str) -> str:
    return (f"the agent did not confirm the cancel within {waited:.0f} s: it ignores it. What it still sends "
            f"for this turn is dropped. {way_back(key)}; a prompt sent now restarts it first.")


def reopened(how: str, carried: int) -> str:
    """Which way a restart got back to the conversation."""
    if how in HOW:
        return f"agent restarted: {HOW[how]}"
    if carried:
        return (f"agent restarted: new session (the agent cannot resume or load the old one); the conversation "
                f"so far ({_size(carried)}) goes with your next prompt as context")
    return "agent restarted: new session"


def _size(chars: int) -> str:
    return f"{chars / 1024:.0f} KB" if chars >= 1024 else f"{chars} characters"
