"""Configuration models: agents are data (command, args, env), never code."""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import ConfigError
from .history.record import HistorySettings
from .log.redact import check_pattern
from .log.ring import LOG_LEVELS as LOG_LEVELS
from .permissions.policy import PermissionSettings
from .terminal.settings import TerminalSettings

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds the ``acp_nvim`` package (``<plugin>/python``)."""

DEMO_AGENT_NAME = "demo"


# -- MCP servers (editor-tools) ----------------------------------------------------------

class McpStdioSpec(BaseModel):
    """An MCP server the agent starts as a subprocess: ``{ command, args, env }``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


class McpRemoteSpec(BaseModel):
    """An MCP server the agent reaches over the network: ``{ type = 'http' | 'sse', url, headers }``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["http", "sse"]
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


MCP_TAGS = ("stdio", "remote", "off")


def _mcp_kind(value: object) -> str:
    if isinstance(value, bool):
        return "off"
    kind = value.get("type", "stdio") if isinstance(value, dict) else getattr(value, "type", "stdio")
    return "stdio" if kind == "stdio" else "remote"


McpServerSpec = McpStdioSpec | McpRemoteSpec
McpEntry = Annotated[
    Annotated[McpStdioSpec, Tag("stdio")] | Annotated[McpRemoteSpec, Tag("remote")]
    | Annotated[Literal[False], Tag("off")],
    Discriminator(_mcp_kind),
]
"""A configured MCP server, or ``false``: removes the global server of that name for one agent."""


class MediaSettings(BaseModel):
    """Images and audio attached to prompts (``@shot.png``, ``:Ai paste``)."""

    model_config = ConfigDict(extra="forbid")

    max_bytes: int = Field(default=5 * 1024 * 1024, ge=0)
    """Larger files are sent as a link, with a message in the chat."""


# -- agents --------------------------------------------------------------------------------

def loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine: 127.0.0.0/8, ::1 or localhost."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class AgentSpec(BaseModel):
    """How to launch one ACP agent."""

    model_config = ConfigDict(extra="forbid")

    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    mode: str | None = None
    """Session mode to select right after ``session/new`` (presets use it to make the policy true)."""
    mcp_servers: dict[str, McpEntry] = Field(default_factory=dict)
    """This agent's MCP servers: they win over the global ones; ``False`` removes a global one."""
    terminal: bool = True
    """Offer ``terminal/*`` to this agent: commands run in Neovim terminal buffers."""
    url: str | None = None
    """A remote agent's WebSocket address (``ws://`` or ``wss://``) instead of a command."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with the WebSocket handshake (an ``Authorization`` token); redacted in the log."""
    insecure: bool = False
    """Allow a ``ws://`` address that is not loopback: headers, files and the MCP token then
    cross the network in clear text (warned at every session start)."""

    @model_validator(mode="after")
    def _command_or_url(self) -> AgentSpec:
        if self.url is None:
            if not self.command:
                raise ValueError("give command (a local agent) or url (a remote one)")
            if self.headers:
                raise ValueError("headers are only for a remote agent (url)")
            if self.insecure:
                raise ValueError("insecure is only for a remote agent (url)")
        elif self.command:
            raise ValueError("give either command (a local agent) or url (a remote one), not both")
        elif not self.url.startswith(("ws://", "wss://")) or len(self.url.split("://", 1)[1]) == 0:
            raise ValueError(f"url must be a ws:// or wss:// address, got {self.url!r}")
        elif self.clear_text and not self.insecure:
            raise ValueError(f"{self.url} is not encrypted (ws://) and not on this machine: headers, files and "
                             "the MCP token would cross the network in clear text; use wss://, or set "
                             "insecure = true for this agent")
        return self

    @property
    def clear_text(self) -> bool:
        """A ``ws://`` address whose host is not loopback (127.0.0.0/8, ::1, localhost)."""
        return self.url is not None and self.url.startswith("ws://") and not loopback(self.url)

    @property
    def remote(self) -> bool:
        """Reached over WebSocket (``url``), not spawned."""
        return self.url is not None


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


class RedactionSettings(BaseModel):
    """``redaction`` in ``setup()``: the user's own secret patterns (Python regular expressions)."""

    model_config = ConfigDict(extra="forbid")

    patterns: list[Annotated[str, AfterValidator(check_pattern)]] = Field(default_factory=list)


class TimeoutSettings(BaseModel):
    """How long acp.nvim waits for an agent, in seconds (``timeouts`` in ``setup()``)."""

    model_config = ConfigDict(extra="forbid")

    handshake: float = Field(default=60.0, gt=0, le=3600)
    """Each request of the handshake (initialize, session/new, session/load, session/resume) and
    of a mode or option change; then it fails as timed out."""
    login: float = Field(default=300.0, gt=0, le=3600)
    """``authenticate``: a login may wait for the user in a browser."""
    notice: float = Field(default=8.0, gt=0, le=3600)
    """After this long without an answer (a handshake request), or without output in a turn while
    no tool runs, the chat says so and offers the restart key."""
    cancel: float = Field(default=5.0, gt=0, le=3600)
    """The agent must end a cancelled turn within this; then it is shown as ignoring the cancel."""


class WireSettings(BaseModel):
    """What the plugin accepts on the agent's stdout."""

    model_config = ConfigDict(extra="forbid")

    max_line_bytes: int = Field(default=128 * 1024 * 1024, ge=1024)
    """A longer line is dropped (and reported) without being held in memory."""


class ChatSettings(BaseModel):
    """The chat's options the Python side uses (the rest are Lua's)."""

    model_config = ConfigDict(extra="ignore")

    steer: bool = Field(default=True, strict=True)
    """A prompt sent while a turn runs is steered into it where the agent offers steering."""


ACTION_KEYS = {"retry": "R", "login": "L", "new_session": "N", "wait": "W"}
"""The chat's keys after a failed prompt (``keymaps.<action>``), named in the chat's offer."""


class RegistrySettings(BaseModel):
    """The ACP registry of ``:Ai agents`` / ``:Ai install`` (read by Lua, which installs agents)."""

    model_config = ConfigDict(extra="forbid")

    url: str = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"


class Settings(BaseModel):
    """Everything ``require('acp_nvim').setup()`` accepts that the Python side uses."""

    model_config = ConfigDict(extra="ignore")

    agents: dict[str, AgentSpec] = Field(default_factory=dict)
    default_agent: str = DEMO_AGENT_NAME
    log: LogSettings = Field(default_factory=LogSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    workspace_roots: list[str] = Field(default_factory=list)
    """Folders besides the cwd that the agent's fs requests may read and write."""
    terminals: TerminalSettings = Field(default_factory=TerminalSettings)
    """Output bounds of the commands agents run through ``terminal/*``."""
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    timeouts: TimeoutSettings = Field(default_factory=TimeoutSettings)
    restart_key: str = "<C-r>"
    """The chat key that restarts the agent (``keymaps.restart``), named in the chat's notices
    ('' when the key is disabled)."""
    action_keys: dict[str, str] = Field(default_factory=lambda: dict(ACTION_KEYS))
    """The keys the chat offers after a failed prompt (from ``keymaps``; '' when disabled)."""
    chat: ChatSettings = Field(default_factory=ChatSettings)
    wire: WireSettings = Field(default_factory=WireSettings)
    mcp_servers: dict[str, McpEntry] = Field(default_factory=dict)
    """MCP servers passed to every agent (per the agent's ``mcpCapabilities``)."""
    editor_mcp: bool = Field(default=True, strict=True)
    """Offer the editor itself as the MCP server ``nvim`` to agents that take http servers."""
    media: MediaSettings = Field(default_factory=MediaSettings)
    registry: RegistrySettings = Field(default_factory=RegistrySettings)
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
        return Settings.model_validate(_with_restart_key(_lua_empty_tables(raw or {})))
    except ValidationError as exc:
        problems = "; ".join(f"{_key_path(err['loc'])}: {err['msg']}" for err in exc.errors())
        raise ConfigError(f"invalid configuration: {problems}") from None


def _key_path(loc: tuple[int | str, ...]) -> str:
    """``mcp_servers.gh.command``: the union's tag (``stdio``/``remote``) is not a key the user wrote."""
    parts = [str(p) for p in loc]
    return ".".join(p for i, p in enumerate(parts)
                    if not (i >= 2 and parts[i - 2] == "mcp_servers" and p in MCP_TAGS))


def _with_restart_key(raw: object) -> object:
    """``keymaps.restart`` as ``restart_key`` and the failure keys as ``action_keys`` (a Lua concern):
    the core names the keys in its notices."""
    if not isinstance(raw, dict):
        return raw
    keymaps = raw.get("keymaps")
    if not isinstance(keymaps, dict):
        return raw
    key = keymaps.get("restart")
    actions = {name: keymaps[name] if isinstance(keymaps.get(name), str) else default
               for name, default in ACTION_KEYS.items()}
    return {**raw, "action_keys": actions, **({"restart_key": key} if isinstance(key, str) else {})}


def _lua_empty_tables(value: object) -> object:
    """Lua's ``{}`` arrives as an empty list; treat it as an empty mapping where one is expected."""
    if isinstance(value, dict):
        return {key: _empty_to_dict(key, item) for key, item in value.items()}
    return value


def _empty_to_dict(key: str, item: object) -> object:
    if item == [] and key in {"agents", "env", "log", "permissions", "redaction", "rejected", "timeouts", "keymaps",
                              "chat", "wire", "mcp_servers", "headers", "media", "terminals", "history"}:
        return {}
    return _lua_empty_tables(item)
