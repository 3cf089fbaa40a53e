"""The one gate for commands: ``terminal/create`` runs exactly what the user saw and accepted.

An agent usually asks ``session/request_permission`` for an execute tool call and then runs its
command through ``terminal/create``. What the user accepted is the request as it was shown
(``approvals.Shown``, never the tool call as it is later): its command, its folder and its
environment. An allowed execute request that still holds (``Approvals.held``: not voided by an
update, of this turn, its tool call not finished) covers one terminal, and only when

- the argv is the approved argument list itself, or, for an approved shell string, ``sh -c`` /
  ``bash -c`` (``-lc``) of exactly that string or its exact ``shlex.split`` (an argument list never
  covers a shell string built from its words);
- the environment is exactly the approved one (none when none was shown);
- the folder is the one shown: its real path and identity (``terminal/place.py``), taken when the
  question was shown (the broker tells the gate, ``opened``), or the session's folder when the
  request named none;
- its words name no link and no path outside the workspace that the prompt did not name
  (``command.path_problems``, checked again now, without following links).

Any other command is put to the broker as an execute request of its own, showing argv, real folder
and environment (rules and the policy answer it first, as for any; an environment that changes
what runs never matches a rule). The folder's identity goes with the command to the editor, which
checks it again when the job starts (``place.launch_argv``).

An approval bound to a workspace script's content (a rule's hash, or the "always" answer that made
such a rule) grants the terminal the bytes read when it was matched: the command's word naming the
script is replaced by a private copy of them (``terminal/approved.py``), so a script the agent swaps
after the check is never what runs. A bound script the terminal's words do not name as the approval
did is refused.
"""

from __future__ import annotations

import secrets
import shlex

from acp.helpers import ToolCallContentVariant
from acp.schema import PermissionOption, TerminalToolCallContent, ToolCallUpdate

from ..port import TerminalSpec
from ..questions import Ticket, Withdrawn
from ..terminal.approved import Approved, Grant
from ..terminal.place import Place, identify
from ..transcript.conversation import Conversation
from .approvals import ALLOWED, Approval, outcome_of
from .broker import PermissionBroker
from .command import Command, ScriptRead, env_pairs, from_input, parse, path_problems, script_indices, shell_script

FINISHED = ("completed", "failed")
RUN = "acp.nvim-run"
RUN_ALWAYS = "acp.nvim-run-always"
REFUSE = "acp.nvim-refuse"
OPTIONS = [
    PermissionOption(option_id=RUN, name="Run", kind="allow_once"),
    PermissionOption(option_id=RUN_ALWAYS, name="Always run this command", kind="allow_always"),
    PermissionOption(option_id=REFUSE, name="Don't run", kind="reject_once"),
]


class ExecGate:
    """Matches terminals against what was approved; asks the broker about anything else."""

    def __init__(self, broker: PermissionBroker, transcript: Conversation, workspace: str) -> None:
        self._broker = broker
        self._transcript = transcript
        self._workspace = workspace
        self._places: dict[int, tuple[Approval, Place | None]] = {}
        """The folder each execute request showed, by approval (identity kept: ids are reused)."""
        self._shown_paths: dict[int, frozenset[str]] = {}
        """The links and paths outside each execute request's prompt named, by approval."""
        self._used: list[Approval] = []
        broker.opened.append(self.opened)

    def opened(self, approval: Approval) -> None:
        """A request is about to be shown: fix the folder it names as it is now."""
        if approval.shown.kind != "execute":
            return
        raw = approval.shown.raw_input
        cwd = raw.get("cwd") if isinstance(raw, dict) else None
        self._forget_old()
        self._places[id(approval)] = (approval, _place(self._workspace if cwd is None else cwd))
        command = from_input(raw)
        self._shown_paths[id(approval)] = frozenset(path_problems(command, self._workspace) if command else ())

    async def allow(self, spec: TerminalSpec) -> Grant | None:
        """Where and what ``spec`` may run (covered by an approval that holds, or allowed now), or None
        (refused). Withdrawn when its question was closed by a cancel, the session's end or the agent."""
        for approval in self._broker.approvals.held("execute"):
            place = self._place_of(approval)
            if place is not None and place.path == spec.cwd and self._usable(approval) \
                    and covers(approval.shown.raw_input, spec) and self._same_paths(approval, spec):
                self._used.append(approval)
                return self._grant(place, spec, approval.bound)
        return await self._ask(spec)

    def _grant(self, place: Place | None, spec: TerminalSpec, bound: tuple[ScriptRead, ...]) -> Grant | None:
        """The grant of an allowed terminal: with ``bound`` scripts, their approved bytes replace the words
        that name them; None when a word that may name a script has no approved content to run."""
        if place is None:
            return None
        if not bound:
            return Grant(place)
        argv = [spec.command, *spec.args]
        script = shell_script(argv)
        parsed = parse(argv)
        if parsed.problem is not None:
            return self._unbound(spec, f"it is not a simple command ({parsed.problem})")
        words = parsed.texts
        scripts = []
        for index in script_indices(words):
            read = next((r for r in bound if r.word == words[index]), None)
            if read is None:
                return self._unbound(spec, f"`{words[index]}` is not the script whose content was approved")
            scripts.append(Approved(index, read.path, read.data))
        if not scripts:
            return self._unbound(spec, "it names none of the scripts whose content was approved")
        return Grant(place, tuple(scripts), words, tuple(argv[:-1]) if script is not None else ())

    def _unbound(self, spec: TerminalSpec, why: str) -> Grant | None:
        """No grant: the approval was bound to content the command does not run as approved."""
        self._transcript.notice(f"not running {shlex.join([spec.command, *spec.args])}: {why}", "error")
        return None

    def _place_of(self, approval: Approval) -> Place | None:
        kept = self._places.get(id(approval))
        return kept[1] if kept is not None and kept[0] is approval else None

    def _same_paths(self, approval: Approval, spec: TerminalSpec) -> bool:
        """Whether the command's words name no link or path outside that its prompt did not show:
        a file made a link after the answer (checked now, without following links) is asked again."""
        parsed = parse([spec.command, *spec.args])
        now = path_problems(Command(parsed.shown, parsed.words, None, spec.cwd), self._workspace)
        return set(now) <= self._shown_paths.get(id(approval), frozenset())

    def _usable(self, approval: Approval) -> bool:
        if any(used is approval for used in self._used):
            return False
        state = self._transcript.tool_calls.get(approval.shown.tool_call_id)
        return state is not None and state.status not in FINISHED

    def _forget_old(self) -> None:
        turn = self._broker.approvals.turn
        self._places = {k: v for k, v in self._places.items() if v[0].turn == turn}
        self._shown_paths = {k: v for k, v in self._shown_paths.items() if k in self._places}
        self._used = [a for a in self._used if a.turn == turn]

    async def _ask(self, spec: TerminalSpec) -> Grant | None:
        place = _place(spec.cwd)
        if place is None or place.path != spec.cwd:
            return None
        argv = [spec.command, *spec.args]
        raw: dict[str, object] = {"command": argv, "cwd": place.path}
        if spec.env:
            raw["env"] = dict(spec.env)
        call = ToolCallUpdate(tool_call_id=f"acp.nvim/{spec.terminal_id}/{secrets.token_hex(6)}",
                              title=f"Run {shlex.join(argv)}", kind="execute", status="pending", raw_input=raw)
        asked: list[Ticket] = []
        response = await self._broker.handle(call, list(OPTIONS), asked=asked)
        held = self._broker.approvals.holding(call.tool_call_id)
        allowed = outcome_of(OPTIONS, response) == ALLOWED and held is not None
        withdrawn = not allowed and any(ticket.cancelled for ticket in asked)
        embedded: list[ToolCallContentVariant] | None = None
        if allowed:
            embedded = [TerminalToolCallContent(type="terminal", terminal_id=spec.terminal_id)]
        if withdrawn:
            self._transcript.tools.cancel_tool_call(call.tool_call_id)  # shown cancelled (⊘), not failed
            raise Withdrawn(f"the question about {shlex.join(argv)!r} was closed unanswered")
        self._transcript.tools.tool_call(ToolCallUpdate(tool_call_id=call.tool_call_id, content=embedded,
                                                        status="completed" if allowed else "failed"))
        return self._grant(place, spec, held.bound) if allowed and held is not None else None


def covers(raw_input: object, spec: TerminalSpec) -> bool:
    """Whether an approved execute request's input names exactly ``spec``'s argv and environment."""
    if not isinstance(raw_input, dict):
        return False
    return _argv_covered(raw_input.get("command", raw_input.get("cmd")), [spec.command, *spec.args]) \
        and _env_covered(raw_input.get("env"), spec.env)


def _argv_covered(approved: object, argv: list[str]) -> bool:
    if isinstance(approved, list):
        return approved == argv
    if not isinstance(approved, str) or not approved:
        return False
    if shell_script(argv) == approved:
        return True
    try:
        return shlex.split(approved) == argv
    except ValueError:
        return False


def _env_covered(approved: object, env: tuple[tuple[str, str], ...]) -> bool:
    pairs = env_pairs(approved)
    if pairs is None or len(dict(env)) != len(env) or len(dict(pairs)) != len(pairs):
        return False
    return dict(pairs) == dict(env)


def _place(cwd: object) -> Place | None:
    if not isinstance(cwd, str) or not cwd.startswith("/") or "\0" in cwd:
        return None
    try:
        return identify(cwd)
    except OSError:
        return None
