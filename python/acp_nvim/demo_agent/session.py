"""Per-session state of the demo agent: modes, config options, history, running turn."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from .options import verbose_option

MODES: dict[str, tuple[str, str]] = {
    "ask": ("Ask before edits", "Every edit and command asks for permission"),
    "code": ("Edit freely", "Edit without asking (the demo agent still asks, to stay testable)"),
}
DEFAULT_MODE = "ask"
MODEL_CONFIG_ID = "model"
MODEL_VALUES: dict[str, str] = {"demo-small": "Demo small", "demo-large": "Demo large"}
MODEL_DESCRIPTIONS: dict[str, str] = {"demo-small": "Fast, short answers", "demo-large": "Slower, longer answers"}
DEFAULT_MODEL = "demo-small"


@dataclass
class TurnUsage:
    """Cumulative (fake, deterministic) token accounting for a session."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        """Sum of input and output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass
class SessionState:
    """Everything the demo agent remembers about one session."""

    session_id: str
    cwd: str
    mode: str = DEFAULT_MODE
    model: str = DEFAULT_MODEL
    verbose: bool = False
    history: list[tuple[str, str]] = field(default_factory=list)
    usage: TurnUsage = field(default_factory=TurnUsage)
    tool_counter: int = 0
    task: asyncio.Task[str] | None = None
    cancel_requested: bool = False
    mcp_servers: list[Any] = field(default_factory=list)
    """The ``mcpServers`` of session/new (or load), for the ``mcp`` scenario."""
    children: set[str] = field(default_factory=set)
    """The child sessions (subagents) this session announced (``children.py``)."""
    cancelled_children: set[str] = field(default_factory=set)
    """The children the client cancelled alone (``session/cancel`` on a child's id)."""

    def next_tool_call_id(self, prefix: str = "call") -> str:
        """Return a fresh, deterministic tool call id for this session."""
        self.tool_counter += 1
        return f"{prefix}-{self.tool_counter}"

    def other_mode(self) -> str:
        """Return the mode that is not current (``ask`` <-> ``code``)."""
        return "code" if self.mode == "ask" else "ask"

    def mode_state(self) -> SessionModeState:
        """Build the SessionModeState advertised to the client."""
        modes = [SessionMode(id=key, name=name, description=desc) for key, (name, desc) in MODES.items()]
        return SessionModeState(current_mode_id=self.mode, available_modes=modes)

    def config_options(self) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        """Build the full list of config options with their current values."""
        values = [SessionConfigSelectOption(value=v, name=name, description=MODEL_DESCRIPTIONS.get(v))
                  for v, name in MODEL_VALUES.items()]
        option = SessionConfigOptionSelect(
            id=MODEL_CONFIG_ID,
            name="Model",
            description="Which (pretend) model the demo agent uses",
            category="model",
            type="select",
            current_value=self.model,
            options=values,
        )
        return [option, verbose_option(self.verbose)]

    def cancel(self) -> None:
        """Cancel the running turn, if any."""
        if self.task is not None and not self.task.done():
            self.cancel_requested = True
            self.task.cancel()
