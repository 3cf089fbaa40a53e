"""Configuration models: agents are data (command, args, env), never code."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError
from .history.record import HistorySettings
from .log.ring import LOG_LEVELS as LOG_LEVELS
from .permissions.policy import PermissionSettings

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds the ``acp_nvim`` package (``<plugin>/python``)."""

DEMO_AGENT_NAME = "demo"


class AgentSpec(BaseModel):
    """How to launch one ACP agent."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    mode: str | None = None
    """Session mode to select right after ``session/new`` (presets use it to make the policy true)."""


class LogSettings(BaseModel):
    """Bounds and level of the per-session protocol log."""

    model_config = ConfigDict(extra="forbid")

    max_entries: int = Field(default=5000, ge=0)
    max_bytes: int = Field(default=8 * 1024 * 1024, ge=0)
    level: str = "debug"

    @field_validator("level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        if value not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return value


class Settings(BaseModel):
    """Everything ``require('acp_nvim').setup()`` accepts that the Python side uses."""

    model_config = ConfigDict(extra="ignore")

    agents: dict[str, AgentSpec] = Field(default_factory=dict)
    default_agent: str = DEMO_AGENT_NAME
    log: LogSettings = Field(default_factory=LogSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    workspace_roots: list[str] = Field(default_factory=list)
    """Folders besides the cwd that the agent's fs requests may read and write."""
    history: HistorySettings = Field(default_factory=HistorySettings)
    """Local session history (``history = false`` in setup() turns it off)."""

    @field_validator("history", mode="before")
    @classmethod
    def _history_switch(cls, value: object) -> object:
        if isinstance(value, bool):
            return {"enabled": value}
        return value

    def agent(self, name: str | None) -> tuple[str, AgentSpec]:
        """Resolve an agent by name (the default when ``None``); raise ConfigError if unknown."""
        chosen = name or self.default_agent
        known = self.all_agents()
        if chosen not in known:
            raise ConfigError(f"unknown agent {chosen!r}; configured: {', '.join(sorted(known))}")
        return chosen, known[chosen]

    def all_agents(self) -> dict[str, AgentSpec]:
        """Configured agents plus the bundled demo agent (unless the user replaced it)."""
        return {DEMO_AGENT_NAME: demo_agent_spec(), **self.agents}


def demo_agent_spec() -> AgentSpec:
    """The bundled offline agent, run by the same interpreter that hosts the plugin."""
    return AgentSpec(
        command=sys.executable,
        args=["-m", "acp_nvim.demo_agent"],
        env={"PYTHONPATH": str(PACKAGE_ROOT)},
    )


def parse_settings(raw: Mapping[str, object] | None) -> Settings:
    """Validate user configuration, naming the offending key path in the error."""
    try:
        return Settings.model_validate(_lua_empty_tables(raw or {}))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from None


def _lua_empty_tables(value: object) -> object:
    """Lua's ``{}`` arrives as an empty list; treat it as an empty mapping where one is expected."""
    if isinstance(value, dict):
        return {key: _empty_to_dict(key, item) for key, item in value.items()}
    return value


def _empty_to_dict(key: str, item: object) -> object:
    if item == [] and key in {"agents", "env", "log", "permissions", "history"}:
        return {}
    return _lua_empty_tables(item)
