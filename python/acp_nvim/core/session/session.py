"""One agent session: the composition root of its parts, and its verbs. The parts do the work:
the link (``core/connection``) owns the agent process and the ACP session; ``opening.py`` is the
one way in; ``lifecycle.py`` holds the state; ``health.py`` hears the watchdog and the agent's
exit; the queue (``core/conversation/queue.py``) runs the turns; the stream (``updates.py``) takes
``session/update`` straight to the transcript; ``guards.py`` holds the files, the broker and the
gates. The editor reads a session through ``view``. Nothing queued is lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from acp.schema import DeniedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from .. import install_hints
from ..agent.process import AgentHooks, AgentProcess
from ..agent.wire import NoiseReporter
from ..box.overlay import Overlay
from ..config import AgentSpec, Settings
from ..connection import mode_policy
from ..connection.link import AgentLink
from ..connection.options import AgentOptions
from ..connection.reconnect import Reconnector
from ..conversation.client import client_for
from ..conversation.details import SessionDetails
from ..conversation.prompt import Prompt as Prompt
from ..errors import SessionClosedError
from ..log.redact import Redactor
from ..log.ring import LogRing
from ..mcp.session_mcp import EditorMcpHost, SessionMcp
from ..permissions.overlay_writes import OverlayProposals
from ..port import EditorPort
from ..questions import Questions
from ..transcript.conversation import Conversation
from ..transcript.paths import PathView
from ..transcript.projection import ChatProjection
from .guards import Guards
from .health import Health
from .lifecycle import Lifecycle, State
from .opening import Opener
from .rewind import Rewinder
from .signals import Signals
from .turns import TurnParts
from .view import SessionView, snapshot


class Session:
    """Owns one agent process and one ACP session on it."""

    def __init__(self, key: str, agent_name: str, spec: AgentSpec, settings: Settings,
                 editor: EditorPort, cwd: str, questions: Questions, editor_mcp: EditorMcpHost | None = None,
                 mcp: SessionMcp | None = None) -> None:
        self.key, self.agent_name, self.spec, self.cwd = key, agent_name, spec, cwd
        self.editor, self.questions = editor, questions
        self.timeouts, self.restart_key = settings.timeouts, settings.restart_key
        self.details = SessionDetails()
        # MCP servers (core/mcp): secrets, then the hook; a warm start's already (its token went to the agent)
        self.mcp = mcp or SessionMcp(agent_name, settings, editor_mcp)
        self.redact = Redactor.for_env({**spec.env, **spec.headers, **self.mcp.secrets()},
                                       patterns=settings.redaction.patterns)
        """Every surface of the session shows text through it: log, chat (and the editor's notifications)."""
        self.log = LogRing(settings.log.max_entries, settings.log.max_bytes, settings.log.level, redact=self.redact)
        self.transcript = Conversation(agent_label=agent_name, redactor=self.redact)
        """What was said (the model); ``chat`` draws it."""
        self.chat = ChatProjection(self.transcript, lambda op: editor.render(key, [op]))
        """The chat's view of the transcript: render ops, view limits, pages and gaps."""
        self.transcript.media.max_bytes = settings.media.received_max_bytes
        self.signals = Signals(key, editor, questions, self.log, self.transcript)
        self.watchers = self.signals.watchers
        self.lifecycle = Lifecycle(key, self.log, self.signals.changed, self.signals.report)
        self.opener = Opener(self)
        self.health = Health(self, self.opener)
        guards = Guards.build(key, agent_name, spec, settings, editor, cwd, questions, self.log, self.transcript,
                              self.signals.report, self.health.waiting)
        self.files, self.reconciler, self.permissions, self.unreviewed, self.checkpoints = (
            guards.files, guards.reconciler, guards.permissions, guards.unreviewed, guards.checkpoints)
        self.write_gate, self.terminal_gate, self.terminals = guards.write_gate, guards.terminal_gate, guards.terminals
        self.transcript.paths = PathView([cwd, *map(str, self.files.policy.roots)], os.environ.get("HOME"))
        self.mode_watch = mode_policy.ModeWatch(self)
        turn_parts = TurnParts.build(key, agent_name, settings, editor, questions, self.details, self.transcript,
                                     self.log, self.signals, self.lifecycle, self.health, guards, self.mode_watch,
                                     self.submit)
        self.queue, self.stream, self.desk, self.steering, self.failed_turns = (
            turn_parts.queue, turn_parts.stream, turn_parts.desk, turn_parts.steering, turn_parts.failed_turns)
        hooks = AgentHooks(noise=NoiseReporter(self.signals.tell), report=self.signals.report,
                           slow=self.health.slow, exited=self.health.exited, timeouts=settings.timeouts)
        self.link = AgentLink(key, agent_name, spec, cwd, client=client_for(self, settings.wire), log=self.log,
                              details=self.details, notice=self.transcript.notice, warn=self.signals.warn,
                              choose=self.signals.choose, replaying=self.stream.replay, hooks=hooks,
                              mcp_servers=self.mcp.bind(key, cwd, self.files.policy, self.log, self.transcript.notice),
                              box_programs=self.mcp.programs())
        self.link.roots = list(settings.workspace_roots)
        self.terminals.box = self._command_box
        self.overlay = OverlayProposals(self._overlay, self.files, self.write_gate, self.log, self.signals.tell,
                                        self.signals.report)
        """A boxed agent's own writes to the workspace, proposed through the write gate."""
        self.reconciler.followers.append(self.overlay.follow)
        self.reconciler.before_turn.append(self.overlay.before_turn)
        self.files.changes.listeners.append(self.overlay.user_wrote)
        self.options = AgentOptions(self.link, self.details, self.mode_watch, self.signals.changed)
        self.reconnector = Reconnector(self.link, self.transcript, self.log,
                                       closed=lambda: self.lifecycle.state == State.CLOSED)
        self.rewinder = Rewinder(key, self.checkpoints, self.files, editor, self.transcript, self.queue,
                                 self.lifecycle, self.opener, self.link, self.stream, self.submit, self.signals.report)
        """:Ai rewind, its undo, and an edited prompt sent again (rewind.py)."""

    def _command_box(self, command: str, env: tuple[tuple[str, str], ...], cwd: str) -> tuple[str, ...]:
        """A command of the agent runs in the box of the agent's current process (none when unboxed)."""
        boxing = self.link.process.boxing
        return boxing.command_prefix(command, env, cwd) if boxing is not None else ()

    def _overlay(self) -> tuple[Overlay | None, int | None]:
        """The overlay of the agent's current process and that process's pid (None, None: none)."""
        process = self.link.process
        boxing = process.boxing
        if boxing is None or boxing.overlay is None or process.process is None:
            return None, None
        return boxing.overlay, process.process.pid

    @property
    def view(self) -> SessionView:
        """What the editor shows of the session, as of now."""
        return snapshot(self)

    @property
    def state(self) -> State:
        return self.lifecycle.state

    @property
    def recovery(self) -> str:
        """Why the chat offers the restart key ('' when all is well)."""
        return self.lifecycle.why

    @property
    def process(self) -> AgentProcess:
        """The agent process (a new one after each restart)."""
        return self.link.process

    @property
    def session_id(self) -> str | None:
        """The ACP session id, once the agent opened the session."""
        return self.link.session_id

    @property
    def processes(self) -> list[AgentProcess]:
        """Its process and those a restart replaced that are still ending (editor exit ends them)."""
        return [*self.link.retiring, self.process]

    # -- the ways in (opening.py) -------------------------------------------------------

    async def start(self) -> None:
        """Spawn the agent, initialize, and open a new ACP session in the editor's cwd.
        A failure is shown in the chat (the session is ``failed``, the restart key offered) and raised."""
        await self.opener.open(self.opener.new())

    async def start_past(self, session_id: str, replay: bool) -> str:
        """Spawn the agent and reopen past session ``session_id`` (``replay``: show what session/load
        replays); how: "resumed", "loaded", or why it is read-only (the session is then closed)."""
        self.checkpoints.adopt(session_id)  # its earlier turns' checkpoints, in this Neovim or another
        opened = await self.opener.open(self.opener.past(session_id, replay))
        return opened.how if opened is not None else ""

    async def start_fork(self, source_id: str) -> None:
        """Spawn the agent and make this session a fork of ``source_id`` (``session/fork``)."""
        await self.opener.open(self.opener.fork(source_id))

    async def restart(self) -> None:
        """A fresh agent process, back on the same conversation (resume, else load, else a new
        session with the conversation so far as context). Cancels a start or restart in progress."""
        self.lifecycle.move(State.STARTING)
        await self.opener.open(self.opener.restart())

    async def close(self) -> None:
        """End the session: turn, questions, ``session/close`` where offered, terminals, agent process."""
        await self.opener.close()

    # -- prompt turns (core/conversation/queue.py) ----------------------------------------

    def submit(self, prompt: Prompt) -> str:
        """Queue a prompt; it starts at once when no turn runs. Returns "started", "queued", "steered"
        (into the running turn), "starting", "restarting" (the agent had stopped, or ignores a
        cancel: it restarts first), or "not sent" (the agent is still not installed: the chat says how to)."""
        state = self.lifecycle.state
        if state == State.CLOSED:
            raise SessionClosedError(f"session {self.key} is closed: start a new one with :Ai new")
        missing = self.opener.missing
        if state == State.FAILED and missing is not None and self._still_missing():
            self.transcript.notice(f"not sent: {missing}", "error")  # a restart cannot help: no queue, no restart
            self.signals.changed()
            return "not sent"
        self.queue.add(prompt)
        if state == State.FAILED or self.lifecycle.stuck:
            why = "ignores the cancel" if self.lifecycle.stuck else "is not running"
            self.transcript.notice(f"the agent {why}: restarting it to send your prompt", "info")
            self.lifecycle.move(State.STARTING)
            self.opener.open_soon(self.opener.restart())
            return "restarting"
        if state == State.STARTING or self.queue.busy:
            steered = self.steering.steer(prompt, self.health.steer_route())  # into the running turn
            self.signals.changed()
            if steered:
                return "steered"
            return "queued" if state != State.STARTING else "starting"
        self.queue.run_soon()
        return "started"

    def _still_missing(self) -> bool:
        return install_hints.is_missing(self.spec.command, {**os.environ, **self.spec.env})

    def edit_queue(self, prompts: list[Prompt]) -> None:
        """Replace the prompts waiting in the queue (the user edited, reordered or dropped them)."""
        self.queue.edit(prompts)

    def before_next_prompt(self, action: Callable[[], None]) -> None:
        """Run ``action`` once, when the next prompt is submitted (the end of a reopened session's replay)."""
        self.queue.before_next(action)

    async def cancel(self) -> bool:
        """Cancel the running turn (``session/cancel``): its questions are answered ``cancelled``, its
        open tool calls marked cancelled, its late output dropped (``health.py``)."""
        return await self.health.cancel()

    async def set_mode(self, mode_id: str) -> None:
        await self.options.set_mode(mode_id)

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        await self.options.set_config_option(config_id, value)

    async def request_permission(self, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption]) -> RequestPermissionResponse:
        if self.queue.cancelling or self.lifecycle.ended:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        answer = self.reconciler.around_permission(tool_call, self.permissions.handle(tool_call, options))
        return await self.checkpoints.around_permission(tool_call, answer)

    def tell(self, text: str) -> None:
        """Something the wire dropped or repaired that the user should hear about."""
        self.signals.tell(text)
