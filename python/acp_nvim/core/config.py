"""Configuration models: agents are data (command, args, env), never code.

These models are the one schema of ``require('acp_nvim').setup()``: every default, bound and
meaning is written here once. ``make docs`` makes from them what Lua needs before the Python
host runs (``lua/acp_nvim/config/schema.lua``) and ``:help acp_nvim-config``
(``nvim/commands/config_docs.py``). Schema words beside pydantic's own ride in ``json_schema_extra``:
``unit`` (``bytes``/``seconds``, for messages), ``choices`` (the allowed strings), ``internal``
(a key the Python side derives, not a user's), ``may_be_false`` (``false`` turns it off).
"""

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

from .box.plan import Plan as BoxPlan
from .box.spec import Shown as BoxShown
from .checkpoints.settings import CheckpointSettings
from .errors import ConfigError
from .history.record import HistorySettings
from .install_hints import registry_ids
from .log.redact import check_pattern
from .log.ring import LOG_LEVELS as LOG_LEVELS
from .permissions.policy import PermissionSettings
from .terminal.settings import TerminalSettings
from .worktrees.settings import WorktreeSettings

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds the ``acp_nvim`` package (``<plugin>/python``)."""

DEMO_AGENT_NAME = "demo"


# -- MCP servers (editor-tools) ----------------------------------------------------------

class McpStdioSpec(BaseModel):
    """An MCP server the agent starts as a subprocess: ``{ command, args, env }``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio"] = Field(default="stdio", description="'stdio' (or left out): a subprocess.")
    command: str = Field(min_length=1, description="The server's executable (PATH is searched).")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables added for it.")


class McpRemoteSpec(BaseModel):
    """An MCP server the agent reaches over the network: ``{ type = 'http' | 'sse', url, headers }``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["http", "sse"] = Field(description="'http' (Streamable HTTP) or 'sse'.")
    url: str = Field(description="An http:// or https:// address.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers sent with every request.")

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
    """Images and audio attached to prompts (``@shot.png``, ``:Ai paste``) and sent by the agent."""

    model_config = ConfigDict(extra="forbid")

    max_bytes: int = Field(default=5 * 1024 * 1024, ge=0, json_schema_extra={"unit": "bytes"},
                           description="The largest image or audio file attached to a prompt (`@shot.png`, "
                                       ":Ai paste); a larger one is sent as a link, with a message in the chat.")
    received_max_bytes: int = Field(default=10 * 1024 * 1024, ge=0, json_schema_extra={"unit": "bytes"},
                                    description="The largest image or audio the agent sends that acp.nvim "
                                                "saves (under stdpath('state')/acp_nvim/media, |acp_nvim-media|); "
                                                "a larger one is one line in the chat, not saved.")


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


class BoxSettings(BaseModel):
    """What an agent's box shows besides the workspace and the system (|acp_nvim-box|)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = Field(default=None, strict=True, description=(
        "Run the agent and its commands boxed; nil: only when Neovim's environment has `ACP_NVIM_BOX=on` "
        "(`box = true` and `box = false` are short for `enabled = …`)."))
    paths: list[str] = Field(default_factory=list, description=(
        "More folders (or files) the agent may read: absolute, or starting with ~ or $VAR (read in the "
        "agent's environment)."))
    writable: list[str] = Field(default_factory=list, description="More folders the agent may read and write.")
    state: list[str] = Field(default_factory=list, description=(
        "The agent's own state folders (read-write, made when missing); the presets fill this."))
    env: list[str] = Field(default_factory=list, description=(
        "Names of the editor's environment variables passed into the box (besides the agent's env)."))

    def plan(self) -> BoxPlan:
        shown = (*(BoxShown(path) for path in self.paths), *(BoxShown(path, True) for path in self.writable))
        return BoxPlan(state=tuple(self.state), paths=shown, passed=tuple(self.env))


class AgentSpec(BaseModel):
    """How to launch one ACP agent."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(default="", description="The agent's executable (PATH is searched); a local agent "
                                                 "gives this, a remote one gives url instead.")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables added to Neovim's "
                                                                  "for the agent.")
    cwd: str | None = Field(default=None, description="The agent's working directory (default: :pwd).")
    mode: str | None = Field(default=None, description="The session mode to select right after the session "
                                                       "opens (the presets set the one their policy needs).")
    mcp_servers: dict[str, McpEntry] = Field(default_factory=dict, description=(
        "This agent's MCP servers: they win over the global ones of the same name; `false` removes a global "
        "one (|acp_nvim-mcp-servers|)."))
    terminal: bool = Field(default=True, description="Offer terminal/* to this agent: the commands it runs "
                                                     "run in Neovim terminal buffers (|acp_nvim-terminals|).")
    url: str | None = Field(default=None, description="A remote agent's WebSocket address (ws:// or wss://) "
                                                      "instead of a command (|acp_nvim-remote|).")
    headers: dict[str, str] = Field(default_factory=dict, description=(
        "A remote agent's headers, sent with the WebSocket handshake (an Authorization token); redacted in "
        "the log."))
    insecure: bool = Field(default=False, description=(
        "A remote agent only: allow a ws:// address that is not this machine. Headers, files and the MCP "
        "token then cross the network in clear text (warned at every session start)."))
    warm: bool | None = Field(default=None, strict=True, description=(
        "Keep one started agent of this kind ready, so :Ai new and the first :Ai send start at once "
        "(|acp_nvim-warm|); nil follows the top-level warm."))
    box: BoxSettings = Field(default_factory=BoxSettings, json_schema_extra={"may_be_false": True}, description=(
        "Run this agent and the commands it runs in a box that shows only the workspace, the system and "
        "the agent's own folders (|acp_nvim-box|); false opts out."))
    bills_per_session: bool = Field(default=False, strict=True, description=(
        "The agent charges for every session it opens: warm = 'default' leaves it cold, and a warm start of "
        "it never opens a session ahead of time (|acp_nvim-warm|)."))

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

    def boxed(self, default_on: bool) -> BoxSettings | None:
        """This agent's box settings, or None when it runs unboxed (``box = false``, or ``enabled`` nil
        while ``default_on`` is false)."""
        enabled = self.box.enabled if self.box.enabled is not None else default_on
        return self.box if enabled else None

    @field_validator("box", mode="before")
    @classmethod
    def _box_switch(cls, value: object) -> object:
        """``box = false`` (or true) is short for ``box = { enabled = … }``."""
        return {"enabled": value} if isinstance(value, bool) else value

    @property
    def clear_text(self) -> bool:
        """A ``ws://`` address whose host is not loopback (127.0.0.0/8, ::1, localhost)."""
        return self.url is not None and self.url.startswith("ws://") and not loopback(self.url)

    @property
    def remote(self) -> bool:
        """Reached over WebSocket (``url``), not spawned."""
        return self.url is not None


NOTIFY_WHEN = ("unfocused", "always", "never")
NOTIFY_SEQUENCES = ("auto", "osc9", "osc777", "bell")


class NotifySettings(BaseModel):
    """``notify`` in ``setup()``: the "needs you" and "done" notices of sessions (used in Lua)."""

    model_config = ConfigDict(extra="forbid")

    when: Literal["unfocused", "always", "never"] = Field(default="unfocused", description=(
        "'unfocused': a notice for a session you are not looking at (no window of the tab page shows "
        "its chat, or Neovim has no focus); 'always': for every session; 'never': none (the User events still fire) "
        "(|acp_nvim-notify|)."))
    terminal: bool = Field(default=True, strict=True, description=(
        "A notice given while Neovim has no focus (under 'always': every notice) also goes to the terminal "
        "as a desktop notification (OSC 9 or OSC 777), else as the bell."))
    sequence: Literal["auto", "osc9", "osc777", "bell"] = Field(default="auto", description=(
        "How the terminal is told: 'auto' picks OSC 9, OSC 777 or the bell by the terminal Neovim runs "
        "in (|acp_nvim-notify|)."))


class LogSettings(BaseModel):
    """Bounds and level of the per-session protocol log."""

    model_config = ConfigDict(extra="forbid")

    max_entries: int = Field(default=5000, ge=0, description="Entries kept per session; 0 turns the log off.")
    max_bytes: int = Field(default=8 * 1024 * 1024, ge=0, json_schema_extra={"unit": "bytes"},
                           description="Bytes kept per session; the oldest entries go first.")
    level: str = Field(default="debug", json_schema_extra={"choices": list(LOG_LEVELS)},
                       description="The lowest level recorded (|acp_nvim-log-levels|).")

    @field_validator("level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        if value not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")
        return value


class RedactionSettings(BaseModel):
    """``redaction`` in ``setup()``: the user's own secret patterns (Python regular expressions)."""

    model_config = ConfigDict(extra="forbid")

    patterns: list[Annotated[str, AfterValidator(check_pattern)]] = Field(default_factory=list, description=(
        "Your own secret shapes, as Python regular expressions, replaced by [redacted] wherever text is shown "
        "(|acp_nvim-redaction|)."))


class TimeoutSettings(BaseModel):
    """How long acp.nvim waits for an agent, in seconds (``timeouts`` in ``setup()``)."""

    model_config = ConfigDict(extra="forbid")

    handshake: float = Field(default=60.0, gt=0, le=3600, json_schema_extra={"unit": "seconds"}, description=(
        "Each request of the handshake (initialize, session/new, session/load, session/resume) and of a mode "
        "or option change; then it fails as timed out."))
    login: float = Field(default=300.0, gt=0, le=3600, json_schema_extra={"unit": "seconds"},
                         description="authenticate: a login may wait for you in a browser.")
    notice: float = Field(default=8.0, gt=0, le=3600, json_schema_extra={"unit": "seconds"}, description=(
        "After this long without an answer (a handshake request), or without output in a turn while no tool "
        "runs, the chat says so and offers the restart key."))
    cancel: float = Field(default=5.0, gt=0, le=3600, json_schema_extra={"unit": "seconds"}, description=(
        "The agent must end a cancelled turn within this; then it is shown as ignoring the cancel."))


class WireSettings(BaseModel):
    """What the plugin accepts on the agent's stdout."""

    model_config = ConfigDict(extra="forbid")

    max_line_bytes: int = Field(default=128 * 1024 * 1024, ge=1024, json_schema_extra={"unit": "bytes"},
                                description="The longest line an agent may write on its stdout: a longer one is "
                                            "dropped and reported, never held in memory (|acp_nvim-wire|).")


CHAT_POSITIONS = ("right", "left", "bottom", "current")


class ChatSettings(BaseModel):
    """``chat`` in ``setup()``: where the chat window opens and how much of a block it shows (used in Lua)."""

    model_config = ConfigDict(extra="ignore")

    position: str = Field(default="right", json_schema_extra={"choices": list(CHAT_POSITIONS)},
                          description="Where the chat window opens: beside the editor, below it, or in the "
                                      "current window.")
    width: float = Field(default=0.4, description="The chat's width (right, left): a fraction of the editor, "
                                                  "or columns when more than 1.")
    height: float = Field(default=0.4, description="The chat's height (bottom): a fraction of the editor, or "
                                                   "lines when more than 1.")
    prompt_height: int = Field(default=6, ge=1, le=100, description=(
        "Lines of the prompt window under the chat (|acp_nvim-prompt|); the chat keeps at least "
        "5 lines, the prompt is lower when the chat window is small."))
    max_block_lines: int = Field(default=2000, ge=1, description=(
        "Lines shown per transcript block; the rest is one key away (|acp_nvim-bounded|)."))
    max_line_chars: int = Field(default=1000, ge=1, description=(
        "Longer lines are broken in the chat; the full text keeps them."))
    steer: bool = Field(default=True, strict=True, description=(
        "A prompt sent while a turn runs is steered into it where the agent offers steering "
        "(|acp_nvim-steering|); false: it waits in the queue. keymaps.steer switches the next one."))

    @field_validator("position")
    @classmethod
    def _known_position(cls, value: str) -> str:
        if value not in CHAT_POSITIONS:
            raise ValueError(f"expected one of {', '.join(CHAT_POSITIONS)}")
        return value


class KeymapSettings(BaseModel):
    """``keymaps`` in ``setup()``: the chat's keys (used in Lua; the core names the restart key).

    No default shadows a command Vim has in normal mode (|acp_nvim-keys|): the chat is a buffer the user
    edits, and ``u``, ``<C-r>``, ``e`` or ``R`` typed from habit must do what Vim does. Each action also has a
    ``<Plug>(AcpNvim…)`` mapping (|acp_nvim-plug|); false or '' turns a key off.
    """

    model_config = ConfigDict(extra="ignore")

    send: str = Field(default="<C-s>", json_schema_extra={"may_be_false": True}, description=(
        "Send the prompt: normal and insert mode in the prompt buffer (<CR> in normal mode there too), "
        "normal mode in the chat."))
    cancel: str = Field(default="<LocalLeader>c", json_schema_extra={"may_be_false": True}, description=(
        "Cancel the turn: normal mode in the chat buffer."))
    open: str = Field(default="<CR>", json_schema_extra={"may_be_false": True}, description=(
        "Normal mode on a block: its full text, its diff, or the location under the cursor."))
    locations: str = Field(default="gl", json_schema_extra={"may_be_false": True}, description=(
        "Normal mode: the tool calls' locations to the quickfix list."))
    history_prev: str = Field(default="<M-p>", json_schema_extra={"may_be_false": True}, description=(
        "Normal and insert mode: the previous sent prompt."))
    history_next: str = Field(default="<M-n>", json_schema_extra={"may_be_false": True}, description=(
        "Normal and insert mode: the next sent prompt."))
    permissions: str = Field(default="<M-a>", json_schema_extra={"may_be_false": True}, description=(
        "Normal and insert mode: go to the pending permission prompt or review."))
    restart: str = Field(default="<LocalLeader>R", json_schema_extra={"may_be_false": True}, description=(
        "Normal mode: asks, then restarts the agent and reopens the session (like :Ai restart); the chat's "
        "notices name it."))
    steer: str = Field(default="<M-s>", json_schema_extra={"may_be_false": True}, description=(
        "Normal and insert mode: the next prompt during a turn is queued instead of steered (or back)."))
    retry: str = Field(default="<LocalLeader>r", json_schema_extra={"may_be_false": True}, description=(
        "After a failed prompt (|acp_nvim-failures|), normal mode in the chat: send it again. "
        "A key Vim uses itself (if you choose one) does what it always does when nothing failed."))
    login: str = Field(default="<LocalLeader>l", json_schema_extra={"may_be_false": True}, description=(
        "After a failed prompt: :Ai login (as retry)."))
    next_waiting: str = Field(default="]w", json_schema_extra={"may_be_false": True}, description=(
        "Normal mode, in any buffer while a session runs (unless the key is mapped already) and in the "
        "board: go to the next session waiting for you, like :Ai next (|acp_nvim-board|)."))
    prev_waiting: str = Field(default="[w", json_schema_extra={"may_be_false": True}, description=(
        "The same, to the previous session waiting for you (:Ai prev)."))
    new_session: str = Field(default="<LocalLeader>n", json_schema_extra={"may_be_false": True}, description=(
        "After a failed prompt: a new session of the same agent, which gets the failed prompt (as retry)."))
    edit_prompt: str = Field(default="<LocalLeader>e", json_schema_extra={"may_be_false": True}, description=(
        "Normal mode on a prompt's \"## You\" line: put the prompt in the prompt window to edit it; sending it "
        "rewinds to before its turn first (|acp_nvim-rewind|)."))
    wait: str = Field(default="<LocalLeader>w", json_schema_extra={"may_be_false": True}, description=(
        "After a usage limit with a known reset time: retry automatically then (as retry)."))
    revert: str = Field(default="<LocalLeader>x", json_schema_extra={"may_be_false": True}, description=(
        "Normal mode on a \"⚠ not reviewed\" line: put the file back as it was before the turn "
        "(|acp_nvim-unreviewed|)."))

    @field_validator("*", mode="before")
    @classmethod
    def _off(cls, value: object) -> object:
        """false turns a key off, as '' does."""
        return "" if value is False else value

    @property
    def actions(self) -> dict[str, str]:
        """The keys the chat offers after a failed prompt, by action ('' when disabled)."""
        return {"retry": self.retry, "login": self.login, "new_session": self.new_session, "wait": self.wait}


class RegistrySettings(BaseModel):
    """``registry`` in ``setup()``: the ACP registry of ``:Ai agents`` / ``:Ai install`` (used in Lua)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(default="https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json", description=(
        "The registry.json that :Ai agents and :Ai install read; cached, fetched again at most hourly, and "
        "read from the cache offline (|acp_nvim-registry|)."))


class Settings(BaseModel):
    """Everything ``require('acp_nvim').setup()`` accepts (the order is the documentation's)."""

    model_config = ConfigDict(extra="ignore")

    agents: dict[str, AgentSpec] = Field(default_factory=dict, description=(
        "Agents by name; an agent is configuration, never code (|acp_nvim-agent-spec|, "
        "|acp_nvim-presets|). The bundled offline agent `demo` is always there."))
    default_agent: str = Field(default=DEMO_AGENT_NAME, description="The agent of :Ai and :Ai send.")
    workspace_roots: list[str] = Field(default_factory=list, description=(
        "Folders besides the working directory that the agent may read and write through the editor (fs "
        "requests); paths outside them are refused (|acp_nvim-confinement|)."))
    mcp_servers: dict[str, McpEntry] = Field(default_factory=dict, description=(
        "MCP servers for every agent, by name: { command, args, env } (stdio) or { type = 'http' | 'sse', "
        "url, headers } (|acp_nvim-mcp-servers|)."))
    editor_mcp: bool = Field(default=True, strict=True, description=(
        "Offer the editor itself as the MCP server \"nvim\" (diagnostics, buffers, LSP) to agents that take "
        "http servers (|acp_nvim-mcp-nvim|)."))
    media: MediaSettings = Field(default_factory=MediaSettings, description=(
        "Images and audio in prompts (|acp_nvim-images|) and from the agent (|acp_nvim-media|)."))
    log: LogSettings = Field(default_factory=LogSettings, description=(
        "Each session's protocol log, a bounded ring (|acp_nvim-log|)."))
    history: HistorySettings = Field(default_factory=HistorySettings, json_schema_extra={"may_be_false": True},
                                     description="Local session history for :Ai resume; false keeps none "
                                                 "(|acp_nvim-sessions|).")
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings,
                                            json_schema_extra={"may_be_false": True}, description=(
        "Each turn's files, kept before the agent changed them, for :Ai rewind; false keeps none "
        "(|acp_nvim-checkpoints|)."))
    chat: ChatSettings = Field(default_factory=ChatSettings, description="The chat window (|acp_nvim-chat|).")
    redaction: RedactionSettings = Field(default_factory=RedactionSettings, description=(
        "Secrets are replaced by [redacted] in the chat, notifications, the log and its export "
        "(|acp_nvim-redaction|)."))
    permissions: PermissionSettings = Field(default_factory=PermissionSettings, description=(
        "What the agent may do unasked, and how you are asked (|acp_nvim-review|)."))
    terminals: TerminalSettings = Field(default_factory=TerminalSettings, description=(
        "The commands agents run through terminal/* (pty jobs in terminal buffers, |acp_nvim-terminals|)."))
    notify: NotifySettings = Field(default_factory=NotifySettings, description=(
        "Notices when a session needs you or ends a turn (|acp_nvim-notify|)."))
    worktrees: WorktreeSettings = Field(default_factory=WorktreeSettings, description=(
        "A git worktree per session: :Ai new {agent} --worktree (|acp_nvim-worktrees|)."))
    warm: Literal["off", "default"] = Field(default="off", json_schema_extra={"may_be_false": True}, description=(
        "'default' keeps one started process of the default agent ready (unless it bills per session); "
        "agents.<name>.warm = true does it for any agent (|acp_nvim-warm|)."))
    warm_idle_s: float = Field(default=600.0, gt=0, le=86400, json_schema_extra={"unit": "seconds"}, description=(
        "A warm agent nobody took is closed after this long (a new one starts when Neovim is idle again)."))
    prestart: bool = Field(default=True, description=(
        "Start the Python host and load the protocol once Neovim is idle after startup, so the first :Ai is "
        "ready sooner; false starts it at the first :Ai (|acp_nvim-prestart|)."))
    wire: WireSettings = Field(default_factory=WireSettings, description="What the agent may write on its "
                                                                         "stdout.")
    registry: RegistrySettings = Field(default_factory=RegistrySettings, description=(
        "Where agents are installed from (|acp_nvim-registry|)."))
    keymaps: KeymapSettings = Field(default_factory=KeymapSettings, description=(
        "The chat's keys; each is a key sequence as for |:map|, false (or '') for none. No default is a "
        "command Vim has in normal mode (|acp_nvim-keys|); every action also has a <Plug> mapping "
        "(|acp_nvim-plug|)."))
    timeouts: TimeoutSettings = Field(default_factory=TimeoutSettings, description=(
        "How long acp.nvim waits for an agent, in seconds (|acp_nvim-faults|)."))

    @property
    def restart_key(self) -> str:
        """The chat key that restarts the agent, named in the chat's notices ('' when it is disabled)."""
        return self.keymaps.restart

    @property
    def action_keys(self) -> dict[str, str]:
        """The keys the chat offers after a failed prompt, by action ('' when disabled)."""
        return self.keymaps.actions

    @field_validator("history", "checkpoints", mode="before")
    @classmethod
    def _history_switch(cls, value: object) -> object:
        if isinstance(value, bool):
            return {"enabled": value}
        return value

    @field_validator("warm", mode="before")
    @classmethod
    def _warm_switch(cls, value: object) -> object:
        return "off" if value is False else value

    def warm_agents(self) -> list[str]:
        """The agents kept warm (|acp_nvim-warm|): those that say ``warm = true``, and the default agent
        under ``warm = 'default'`` unless it says ``warm = false`` or bills per session."""
        agents = self.all_agents()
        chosen = [name for name, spec in agents.items() if spec.warm is True]
        default = agents.get(self.default_agent)
        if self.warm == "default" and default is not None and default.warm is None and not default.bills_per_session:
            chosen.append(self.default_agent)
        return list(dict.fromkeys(name for name in chosen if not agents[name].remote))

    def agent(self, name: str | None) -> tuple[str, AgentSpec]:
        """Resolve an agent by name (the default when ``None``); raise ConfigError if unknown."""
        chosen = name or self.default_agent
        known = self.all_agents()
        if chosen not in known:
            install = f"; the ACP registry has it: :Ai install {chosen}" if chosen in registry_ids() else ""
            raise ConfigError(f"unknown agent {chosen!r}{install}; configured: {', '.join(sorted(known))}")
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
        problems = "; ".join(f"{_key_path(err['loc'])}: {err['msg']}" for err in exc.errors())
        raise ConfigError(f"invalid configuration: {problems}") from None


def _key_path(loc: tuple[int | str, ...]) -> str:
    """``mcp_servers.gh.command``: the union's tag (``stdio``/``remote``) is not a key the user wrote."""
    parts = [str(p) for p in loc]
    return ".".join(p for i, p in enumerate(parts)
                    if not (i >= 2 and parts[i - 2] == "mcp_servers" and p in MCP_TAGS))


def _lua_empty_tables(value: object) -> object:
    """Lua's ``{}`` arrives as an empty list; treat it as an empty mapping where one is expected."""
    if isinstance(value, dict):
        return {key: _empty_to_dict(key, item) for key, item in value.items()}
    return value


def _empty_to_dict(key: str, item: object) -> object:
    if item == [] and key in {"agents", "env", "log", "permissions", "redaction", "rejected", "timeouts", "keymaps",
                              "wire", "mcp_servers", "headers", "media", "terminals", "history", "chat",
                              "checkpoints", "notify", "worktrees"}:
        return {}
    return _lua_empty_tables(item)
