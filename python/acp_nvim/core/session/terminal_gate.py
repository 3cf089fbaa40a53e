"""The permission policy applied to ``terminal/create`` (issue 15, terminals).

An agent usually asks ``session/request_permission`` for an execute tool call and then runs
its command through ``terminal/create``. A command the user (or the policy, or a rule) already
allowed that way runs without a second question: each allowed execute call covers one
terminal whose command line contains its command. Any other command is put to the permission
broker as an execute request of its own (rules and the policy answer it first, as for any).
"""

from __future__ import annotations

from acp.helpers import ToolCallContentVariant
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TerminalToolCallContent,
    ToolCallUpdate,
)

from ..permissions.broker import PermissionBroker
from ..port import TerminalSpec
from ..transcript.tool_calls import ToolCallState, command_of
from ..transcript.transcript import Transcript

SHELLS = {"sh", "bash", "zsh", "dash", "fish", "ksh"}
SHELL_FLAGS = (["-c"], ["-lc"], ["-l", "-c"])
FINISHED = ("completed", "failed")
RUN = "acp.nvim-run"
RUN_ALWAYS = "acp.nvim-run-always"
REFUSE = "acp.nvim-refuse"
OPTIONS = [
    PermissionOption(option_id=RUN, name="Run", kind="allow_once"),
    PermissionOption(option_id=RUN_ALWAYS, name="Always run this command", kind="allow_always"),
    PermissionOption(option_id=REFUSE, name="Don't run", kind="reject_once"),
]


class TerminalGate:
    """Remembers allowed execute calls; asks the broker about commands none of them covers."""

    def __init__(self, broker: PermissionBroker, transcript: Transcript) -> None:
        self._broker = broker
        self._transcript = transcript
        self._allowed: list[tuple[str, str]] = []
        """(tool call id, command) of allowed execute calls not yet used by a terminal."""

    def noted(self, state: ToolCallState | None, options: list[PermissionOption],
              response: RequestPermissionResponse) -> None:
        """An answered permission request: an allowed execute call's command may run once."""
        command = command_of(state.raw_input) if state is not None and state.kind == "execute" else None
        if state is not None and command and _allowed(options, response):
            self._allowed.append((state.tool_call_id, _words(command)))

    async def allow(self, spec: TerminalSpec) -> bool:
        """Whether ``spec`` may run (covered by an allowed, unfinished call, or allowed now)."""
        self._allowed = [(cid, cmd) for cid, cmd in self._allowed if not self._finished(cid)]
        runs = _command_lines(spec)
        for index, (_, command) in enumerate(self._allowed):
            if command in runs:
                del self._allowed[index]
                return True
        return await self._ask(spec, _words(" ".join([spec.command, *spec.args])))

    def _finished(self, tool_call_id: str) -> bool:
        state = self._transcript.tool_calls.get(tool_call_id)
        return state is None or state.status in FINISHED

    async def _ask(self, spec: TerminalSpec, line: str) -> bool:
        call = ToolCallUpdate(tool_call_id=f"acp.nvim/{spec.terminal_id}", title=f"Run {line}", kind="execute",
                              status="pending", raw_input={"command": line, "cwd": spec.cwd})
        response = await self._broker.handle(call, list(OPTIONS))
        allowed = _allowed(OPTIONS, response)
        embedded: list[ToolCallContentVariant] | None = None
        if allowed:
            embedded = [TerminalToolCallContent(type="terminal", terminal_id=spec.terminal_id)]
        self._transcript.tool_call(ToolCallUpdate(tool_call_id=call.tool_call_id, content=embedded,
                                                  status="completed" if allowed else "failed"))
        return allowed


def _allowed(options: list[PermissionOption], response: RequestPermissionResponse) -> bool:
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return False
    kind = next((o.kind for o in options if o.option_id == outcome.option_id), "")
    return kind.startswith("allow")


def _command_lines(spec: TerminalSpec) -> set[str]:
    """What the terminal runs, as an allowed command would name it."""
    lines = {_words(" ".join([spec.command, *spec.args]))}
    shell = spec.command.rsplit("/", 1)[-1]
    if shell in SHELLS and spec.args and list(spec.args[:-1]) in SHELL_FLAGS:
        lines.add(_words(spec.args[-1]))
    return lines


def _words(text: str) -> str:
    return " ".join(text.split())
