"""The user's permission policy wins over the agent's mode.

Some agents start in a mode that never asks: claude-agent-acp starts in ``auto`` and writes
files with no permission request, so the session's policy ``ask`` would hold for nothing.
When a session opens (and reopens), :func:`uphold` looks the agent up in ``MODE_TABLE`` —
by the name its ``initialize`` response gives, else by the modes it offers, never by the
name in the user's config — and, if its current mode skips what the policy wants asked,
switches to the agent's asking mode and says so in the chat; with no such mode it warns
that edits won't be reviewed. A ``mode`` the user configured for the agent (the presets
set one) is kept: the chat only notes what it skips.

The same rule holds for the whole session: :class:`ModeWatch` sees every mode the agent
reports (a ``current_mode_update``, the mode option of a ``config_option_update``, the
options a ``session/set_config_option`` answers with) and judges a mode the agent switched
to on its own as :func:`uphold` judges the first one. A mode the user chose (``:Ai mode``)
is theirs to keep. A hostile agent that keeps switching itself back is switched at most
``MAX_SWITCHES`` times, then only warned about.

The mode ids come from the agents pinned in tests/real_agents (see tests/real_agents/README.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..agent.process import AgentProcess
from ..config import AgentSpec
from ..conversation.details import SessionDetails
from ..port import EditorPort
from ..tasks import spawn
from ..transcript.conversation import Conversation


@dataclass(frozen=True, slots=True)
class AgentModes:
    """What one agent's modes mean for permission requests."""

    label: str
    names: tuple[str, ...]
    """Lowercase parts of the ``agentInfo.name`` of the ``initialize`` response."""
    signature: frozenset[str]
    """Mode ids that identify the agent when its name is unknown (all of them offered)."""
    asks: str | None
    """The mode that asks before edits and commands (None: the agent has none)."""
    skips_edits: frozenset[str] = frozenset()
    """Modes that apply edits without asking (commands still ask)."""
    skips_all: frozenset[str] = frozenset()
    """Modes that ask nothing."""
    asks_by_env: Callable[[Mapping[str, str]], bool] | None = field(default=None, compare=False)
    """For agents without modes: whether their environment makes them ask before edits."""
    advice: str = ""
    """What makes the agent ask, when no mode does."""
    preset: str = ""
    """The ``acp_nvim.presets`` entry that launches this agent ('' for none)."""
    preset_modes: tuple[tuple[str, str], ...] = ()
    """The mode that preset selects under each permission policy (``lua/acp_nvim/presets/modes.lua``)."""


def _opencode_asks(env: Mapping[str, str]) -> bool:
    """opencode asks before edits only when its permission config says so (the preset sets it by env)."""
    try:
        permission = json.loads(env.get("OPENCODE_PERMISSION", "null"))
    except ValueError:
        return False
    return permission == "ask" or (isinstance(permission, dict) and permission.get("edit") == "ask")


MODE_TABLE: tuple[AgentModes, ...] = (
    AgentModes("Claude Code", ("claude",), frozenset({"default", "acceptEdits"}), asks="default",
               skips_edits=frozenset({"acceptEdits"}), skips_all=frozenset({"auto", "bypassPermissions"}),
               preset="claude",
               preset_modes=(("ask", "default"), ("auto-edit", "acceptEdits"), ("trust", "bypassPermissions"))),
    # @agentclientprotocol/codex-acp: its name contains the archived adapter's, so it comes first
    AgentModes("Codex", ("agentclientprotocol/codex",), frozenset({"workspace-write", "agent-full-access"}),
               asks="read-only", skips_all=frozenset({"workspace-write", "agent", "agent-full-access"}),
               preset="codex",
               preset_modes=(("ask", "read-only"), ("auto-edit", "workspace-write"), ("trust", "agent-full-access"))),
    AgentModes("Codex (zed-industries)", ("codex",), frozenset({"read-only", "full-access"}), asks="read-only",
               skips_all=frozenset({"auto", "full-access"})),
    AgentModes("Gemini CLI", ("gemini",), frozenset({"autoEdit", "yolo"}), asks="default",
               skips_edits=frozenset({"autoEdit"}), skips_all=frozenset({"yolo"}),
               preset="gemini", preset_modes=(("ask", "default"), ("auto-edit", "autoEdit"), ("trust", "yolo"))),
    AgentModes("opencode", ("opencode",), frozenset(), asks=None, asks_by_env=_opencode_asks,
               advice='set its permission config (OPENCODE_PERMISSION=\'{"edit":"ask","bash":"ask"}\', '
                      "as the opencode preset does)"),
)


def find(agent_name: str, offered: set[str]) -> AgentModes | None:
    """The table entry for an agent: by its ``initialize`` name, else by the modes it offers."""
    name = agent_name.lower()
    for entry in MODE_TABLE:
        if any(part in name for part in entry.names):
            return entry
    for entry in MODE_TABLE:
        if entry.signature and entry.signature <= offered:
            return entry
    return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do about a session's mode: switch, warn (edits go unreviewed), or note."""

    switch_to: str | None = None
    warning: str = ""
    note: str = ""


def judge(entry: AgentModes | None, current: str | None, offered: set[str], policy: str,
          configured: str | None, env: Mapping[str, str], how: str = "started in") -> Verdict | None:
    """The verdict for an agent in mode ``current`` under ``policy``; None when all is well.
    ``how`` words how the agent came to that mode (it ``started in`` it, or ``switched itself to`` it)."""
    if entry is None or policy == "trust":
        return None
    skipped = _skipped(entry, current, policy)
    if skipped is None:
        return _without_modes(entry, offered, policy, env)
    if configured and configured == current:
        return Verdict(note=f"mode {current} (set in your config) {skipped}: under permission policy {policy} "
                            "its edits will not be reviewed")
    if entry.asks and entry.asks in offered:
        return Verdict(switch_to=entry.asks,
                       note=f"permission policy {policy}: the agent {how} mode {current}, which {skipped}; "
                            f"switched to mode {entry.asks}, which asks (:Ai mode {current} switches back)")
    return Verdict(warning=f"permission policy {policy}, but the agent's mode {current} {skipped} and it offers "
                           "no mode that asks: its edits won't be reviewed")


def _skipped(entry: AgentModes, current: str | None, policy: str) -> str | None:
    """How mode ``current`` falls short of ``policy`` (None: it does not)."""
    if current in entry.skips_all:
        return "asks nothing"
    if policy == "ask" and current in entry.skips_edits:
        return "applies edits without asking"
    return None


def _without_modes(entry: AgentModes, offered: set[str], policy: str, env: Mapping[str, str]) -> Verdict | None:
    if entry.asks is not None or entry.asks_by_env is None or policy != "ask" or entry.asks_by_env(env):
        return None
    return Verdict(warning=f"permission policy ask, but {entry.label} has no mode that asks and its "
                           f"environment does not make it ask: unless its own config does, its edits won't be "
                           f"reviewed. To review them, {entry.advice}")


# -- applying it to a session ------------------------------------------------------------


class _Policy(Protocol):
    @property
    def policy(self) -> str: ...


class Target(Protocol):
    """What :func:`uphold` needs of a session."""

    @property
    def key(self) -> str: ...
    @property
    def spec(self) -> AgentSpec: ...
    @property
    def details(self) -> SessionDetails: ...
    @property
    def transcript(self) -> Conversation: ...
    @property
    def editor(self) -> EditorPort: ...
    @property
    def permissions(self) -> _Policy: ...
    @property
    def process(self) -> AgentProcess: ...
    @property
    def mode_watch(self) -> ModeWatch: ...

    async def set_mode(self, mode_id: str) -> None: ...

    async def set_config_option(self, config_id: str, value: str | bool) -> None: ...


MAX_SWITCHES = 3
"""How many times in a session the agent's own switch to a mode that skips is switched back."""


class ModeWatch:
    """Judges every mode the agent reports once the session opened (see the module's docstring)."""

    def __init__(self, session: Target) -> None:
        self._session = session
        self._armed = False
        self._last: str | None = None
        self._chosen: str | None = None
        self._switches = 0

    def arm(self, current: str | None) -> None:
        """The session opened in mode ``current`` and :func:`uphold` judged it: watch from here."""
        self._armed, self._last = True, current

    def asked(self, mode_id: str) -> None:
        """The user (or the policy) asked for ``mode_id``: the agent reporting it is no switch of its own."""
        self._chosen = self._last = mode_id

    def reported(self, mode: str | None) -> None:
        """The agent says its mode is now ``mode``."""
        if not self._armed or mode is None or mode == self._last:
            return
        self._last = mode
        if mode != self._chosen:
            session = self._session
            spawn(self._judge(mode), lambda text: _warn(session, text), f"{session.key} mode policy")

    async def _judge(self, mode: str) -> None:
        session = self._session
        verdict = _verdict(session, mode, self._chosen or session.spec.mode, "switched itself to")
        if verdict is None:
            return
        if verdict.switch_to is not None:
            self._switches += 1
            if self._switches > MAX_SWITCHES:
                _warn(session, f"permission policy {session.permissions.policy}: the agent keeps switching itself "
                               f"to mode {mode}, which skips permission requests: its edits may not be reviewed "
                               f"(:Ai mode {verdict.switch_to} switches back)")
                return
        await _apply(session, verdict)


def _verdict(session: Target, current: str | None, configured: str | None, how: str) -> Verdict | None:
    details = session.details
    offered = {mid for mid, _ in details.modes} | _mode_option_values(details)
    info = session.process.info
    name = info.agent_info.name if info is not None and info.agent_info is not None else ""
    return judge(find(name, offered), current, offered, session.permissions.policy, configured,
                 session.spec.env, how)


async def uphold(session: Target) -> None:
    """Check the session's mode against its policy; switch to the asking mode, or warn. From here
    on the session's :class:`ModeWatch` judges every mode the agent switches to by itself."""
    current = _mode_option_current(session.details) or session.details.mode
    verdict = _verdict(session, current, session.spec.mode, "started in")
    session.mode_watch.arm(current)
    if verdict is not None:
        await _apply(session, verdict)


async def _apply(session: Target, verdict: Verdict) -> None:
    if verdict.switch_to is not None:
        try:
            await _switch(session, verdict.switch_to)
        except Exception as exc:  # the session must start anyway; the user must know
            _warn(session, f"permission policy {session.permissions.policy}: switching the agent to mode "
                           f"{verdict.switch_to} failed ({exc}): its edits may not be reviewed")
            return
    if verdict.warning:
        _warn(session, verdict.warning)
    if verdict.note:
        session.transcript.notice(verdict.note, "info")


async def _switch(session: Target, mode_id: str) -> None:
    # the mode config option first: where an agent offers it and modes, ACP says it is the one to use
    option = session.details.mode_option()
    if option is not None and mode_id in {v.value for v in option.values}:
        await session.set_config_option(option.id, mode_id)
        return
    if mode_id in {mid for mid, _ in session.details.modes}:
        await session.set_mode(mode_id)
        return
    option = session.details.option("mode")
    if option is None:
        raise LookupError(f"the agent offers no mode {mode_id}")
    await session.set_config_option(option.id, mode_id)


def _mode_option_values(details: SessionDetails) -> set[str]:
    option = details.option("mode")
    if option is None or option.category != "mode":
        return set()
    return {value.value for value in option.values}


def _mode_option_current(details: SessionDetails) -> str | None:
    option = details.option("mode")
    return str(option.current) if option is not None and option.category == "mode" else None


def _warn(session: Target, text: str) -> None:
    session.transcript.notice(text, "error")
    session.editor.notify(f"{session.key}: {text}", "warn")
