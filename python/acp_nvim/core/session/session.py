"""One agent session: its process and ACP session, its state, prompt queue and permission requests.

The session composes its parts and runs their lifecycle: ``prompt.py`` runs one turn,
``watch.py`` watches it, ``updates.py`` routes ``session/update``, ``client.py`` serves the
agent's requests, the broker (``core/permissions``) answers permission requests, and the file
side (``core/files``) serves and reconciles files.

Recovery: when the agent exits, does not answer, or ignores a cancel, the chat says so and
offers the restart key (``recovery`` holds why). A restart starts a fresh process and reopens
the same conversation (resume, else load, else a new session that gets the conversation so
far with the next prompt). Nothing queued is lost: a prompt the agent never got stays in the
queue and is sent after the restart; a prompt sent to a stopped agent restarts it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable, Coroutine

from acp.helpers import SessionUpdate
from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from .. import tasks
from ..agent import remote
from ..agent.process import AgentHooks, AgentProcess, exit_summary
from ..agent.wire import NoiseReporter
from ..config import AgentSpec, Settings
from ..connection import mode_policy, reconnect, reopen
from ..connection.link import NEW, AgentLink, Attached
from ..connection.reconnect import Reconnector
from ..conversation import failures
from ..conversation.asking import QuestionDesk
from ..conversation.client import client_for
from ..conversation.details import SessionDetails
from ..conversation.failed_turns import FailedTurns
from ..conversation.prompt import Link, Turn, TurnRunner
from ..conversation.prompt import Prompt as Prompt
from ..conversation.schema_ext import steering_supported
from ..conversation.steering import Route, Steering
from ..conversation.updates import UpdateRouter
from ..conversation.watch import TurnWatch, WatchHooks
from ..errors import AcpNvimError, SessionClosedError
from ..files.paths import PathPolicy
from ..files.side import FileSide
from ..log.redact import Redactor
from ..log.ring import LogRing
from ..mcp.session_mcp import EditorMcpHost, SessionMcp
from ..permissions.accepted import AcceptedEdits
from ..permissions.broker import PermissionBroker, Scope
from ..permissions.exec_gate import ExecGate
from ..permissions.unreviewed import UnreviewedEdits
from ..permissions.write_gate import WriteGate
from ..port import EditorPort
from ..prompting import attachments
from ..questions import CHOICE, Questions, Ticket, choice_index
from ..terminal.service import TerminalService
from ..transcript.paths import PathView
from ..transcript.tool_calls import ToolCallState
from ..transcript.transcript import Transcript
from . import notices

STATES = ("starting", "idle", "running", "waiting", "closed", "failed")
ENDED = ("closed", "failed")
"""States without a live agent: ``failed`` comes back with a restart, ``closed`` never does."""
TURN_STATES = ("running", "waiting")
CARRY_LIMIT = 100_000
"""Characters of the conversation sent along when a restart could not reopen the session."""
LATE_AFTER_CANCEL = (AgentMessageChunk, AgentThoughtChunk, UserMessageChunk, ToolCallStart, AgentPlanUpdate,
                     AgentPlanContentUpdate)
"""Updates dropped between a cancel and the end of the turn (late output of the cancelled turn)."""


class Session:
    """Owns one agent process and one ACP session on it."""

    def __init__(self, key: str, agent_name: str, spec: AgentSpec, settings: Settings,
                 editor: EditorPort, cwd: str, questions: Questions, editor_mcp: EditorMcpHost | None = None) -> None:
        self.key = key
        self.agent_name = agent_name
        self.spec = spec
        self.cwd = cwd
        self.editor = editor
        self.questions = questions
        self.timeouts = settings.timeouts
        self.restart_key = settings.restart_key
        self.state = "starting"
        self.recovery = ""
        """Why the chat offers the restart key ('' when all is well)."""
        self.queue: deque[Prompt] = deque()
        self.details = SessionDetails()
        self.mcp = SessionMcp(agent_name, settings, editor_mcp)  # MCP servers (core/mcp): secrets, then the hook
        self.redact = Redactor.for_env({**spec.env, **spec.headers, **self.mcp.secrets()},
                                       patterns=settings.redaction.patterns)
        """Every surface of the session shows text through it: log, chat (and the editor's notifications)."""
        self.log = LogRing(settings.log.max_entries, settings.log.max_bytes, settings.log.level, redact=self.redact)
        self.transcript = Transcript(lambda op: editor.render(key, [op]), agent_label=agent_name,
                                     redactor=self.redact)
        roots = [*settings.workspace_roots, *([spec.cwd] if spec.cwd else [])]
        policy = PathPolicy.for_workspace(cwd, roots)
        self.transcript.paths = PathView([cwd, *(str(root) for root in policy.roots)], os.environ.get("HOME"))
        self._accepted = AcceptedEdits(policy)
        files = FileSide.create(editor, policy, questions=questions, owner=key, log=self.log,
                                notice=self.transcript.notice)
        self.files, self.reconciler = files.service, files.reconciler
        self.permissions = PermissionBroker(
            Scope(key, agent_name, cwd), settings.permissions, questions=questions, editor=editor,
            transcript=self.transcript, files=self.files, accepted=self._accepted, report=self._report,
            waiting=self._waiting)
        self.unreviewed = UnreviewedEdits(self.transcript)
        self.write_gate = WriteGate(self.permissions, self.transcript, cwd, self._report, self.unreviewed.flag,
                                    files.ledger.view_open)
        """Every write passes it (fs writes, buffer writes, reverts, corrections); it follows disk writers."""
        self.files.gate = self.write_gate
        self.files.changes.listeners.append(self.write_gate.disk_changed)
        # -- terminal/* through the editor, gated by the permission policy
        self.terminal_gate = ExecGate(self.permissions, self.transcript, cwd)
        self.terminals = TerminalService(key, editor, self.files.policy, cwd, settings.terminals,
                                         allow=self.terminal_gate.allow, refresh=self.transcript.refresh_terminal,
                                         log=self.log)
        self.transcript.terminal_view = self.terminals.preview
        self.mode_watch = mode_policy.ModeWatch(self)
        self._updates = UpdateRouter(self.transcript, self.details, self.log, self._tool_call_changed, self._changed,
                                     self.mode_watch.reported)
        self._turns = TurnRunner(self.transcript, self.details, files, self.permissions.start_turn,
                                 attachments.Packer(editor.buffer_text, settings.media.max_bytes,
                                                    self.transcript.notice))
        hooks = AgentHooks(noise=NoiseReporter(lambda text: editor.notify(f"{key}: {text}", "warn")),
                           report=self._report, slow=self._slow, exited=self._exited, timeouts=settings.timeouts)
        self._link = AgentLink(key, agent_name, spec, cwd, client=client_for(self, settings.wire), log=self.log,
                               details=self.details, notice=self.transcript.notice, warn=self._mode_warning,
                               choose=self._choose, replaying=self._replaying, hooks=hooks,
                               mcp_servers=self.mcp.bind(key, cwd, self.files.policy, self.log, self.transcript.notice))
        self._watch_hooks = WatchHooks(last_heard=lambda: self.process.last_heard, quiet=self._quiet,
                                       silent=self._silent, speaks=self._speaks, ignores_cancel=self._ignores_cancel)
        self._cancelling = False
        self.desk = QuestionDesk(key, agent_name, questions, editor, self.transcript, self.log,
                                 closed=lambda: self._cancelling or self.ended,
                                 waiting=self._waiting)  # elicitation/*, $/cancel_request: core/conversation/asking.py
        self._stuck = False
        """The agent ignores a cancel: a prompt restarts it first."""
        self._turn: Turn | None = None
        self._stopped_turn = False
        """The last turn ended because the connection closed: the exit that follows was during it."""
        self._carry: str | None = None
        self._runner: asyncio.Task[None] | None = None
        self._lifecycle: asyncio.Task[Exception | None] | None = None
        self._reconnector = Reconnector(self._link, self.transcript, self.log, closed=lambda: self.state == "closed")
        self._link.roots = list(settings.workspace_roots)
        self.watchers: list[Callable[[Session], None]] = []
        """Told of every change (the local history's recorder)."""
        self._before_prompt: list[Callable[[], None]] = []
        self._holding_replay = False
        self.steering = Steering(settings.chat.steer, self.queue, self.transcript, self.log, self._changed,
                                 self._report)
        self.failed_turns = FailedTurns(self.transcript, settings.action_keys, self._agent_names, self.submit,
                                        self._changed, self._report)

    # -- what the editor shows -----------------------------------------------------

    @property
    def mode(self) -> str | None:
        return self.details.mode

    @property
    def modes(self) -> list[tuple[str, str]]:
        return self.details.modes

    @property
    def title(self) -> str | None:
        return self.details.title

    @property
    def usage(self) -> str | None:
        return self.details.usage

    @property
    def commands(self) -> list[str]:
        return [name for name, _ in self.details.commands]

    @property
    def ended(self) -> bool:
        """Closed or failed: no agent runs (a failed session comes back with a restart)."""
        return self.state in ENDED

    @property
    def pending(self) -> list[Ticket]:
        """Permission requests shown to the user and not answered yet."""
        return self.questions.waiting(self.key)

    def _set_state(self, state: str) -> None:
        self.state = state
        self._changed()

    def _set_recovery(self, reason: str) -> None:
        if reason != self.recovery:
            self.recovery = reason
            self._changed()

    def _changed(self) -> None:
        self.editor.session_changed(self.key)
        for watcher in self.watchers:
            watcher(self)

    def _report(self, message: str) -> None:
        self.log.add("error", "error", message)
        self.editor.notify(f"{self.key}: {message}", "error")

    # -- lifecycle -----------------------------------------------------------------

    @property
    def process(self) -> AgentProcess:
        """The agent process (a new one after each restart)."""
        return self._link.process

    @property
    def session_id(self) -> str | None:
        """The ACP session id, once the agent opened the session."""
        return self._link.session_id

    async def start(self) -> None:
        """Spawn the agent, initialize, and open a new ACP session in the editor's cwd.

        A failure is shown in the chat (the session is ``failed``, the restart key offered) and raised.
        """
        error = await self._run_lifecycle(self._open(), "start")
        if error is not None:
            raise error

    # -- a past session, a fork (core/connection/reopen.py) ------

    async def start_past(self, session_id: str, replay: bool) -> str:
        """Spawn the agent and reopen past session ``session_id`` (``replay``: show what session/load
        replays); how: "resumed", "loaded", or why it is read-only (the session is then closed).
        A failure is shown in the chat as a start's is, and raised."""
        how: list[str] = []
        error = await self._run_lifecycle(self._open_past(session_id, replay, how), "resume")
        if error is not None:
            raise error
        return how[0]

    async def _open_past(self, session_id: str, replay: bool, how: list[str]) -> None:
        self._warn_clear_text()
        try:
            reopened = await reopen.open_past(self._link, session_id, replay, self._hold_replay)
            if reopened.response is not None:
                await self._link.attach(reopened.response)
                await mode_policy.uphold(self)
        except Exception as exc:
            self._failed(f"failed to start: {exc}", "the agent did not start", exc)
            raise
        how.append(reopened.how)
        if reopened.response is None:
            self._set_state("closed")
            await self.process.close()
            return
        if reopened.replay_held:
            self._release_replay_at_prompt()
        self._ready()

    def before_next_prompt(self, action: Callable[[], None]) -> None:
        """Run ``action`` once, when the next prompt is submitted (the end of a reopened session's replay)."""
        self._before_prompt.append(action)

    def _prompting(self) -> None:
        actions, self._before_prompt = self._before_prompt, []
        for action in actions:
            action()

    async def start_fork(self, source_id: str) -> None:
        """Spawn the agent and make this session a fork of ``source_id`` (``session/fork``). A failure
        is shown in the chat as a start's is, and raised."""
        error = await self._run_lifecycle(self._open_fork(source_id), "fork")
        if error is not None:
            raise error

    async def _open_fork(self, source_id: str) -> None:
        try:
            response = await reopen.fork(self._link, source_id, self._hold_replay)
            await self._link.attach(response)
            await mode_policy.uphold(self)
        except Exception as exc:
            self._failed(f"failed to start: {exc}", "the agent did not start", exc)
            raise
        self._release_replay_at_prompt()
        self._ready()

    def _hold_replay(self, hold: bool) -> None:
        self._holding_replay = hold

    def _release_replay_at_prompt(self) -> None:
        """The held replay ends with the next prompt; at once when one was typed while the session started."""
        if self.queue:
            self._hold_replay(False)
        else:
            self.before_next_prompt(lambda: self._hold_replay(False))


    async def restart(self) -> None:
        """A fresh agent process, back on the same conversation (resume, else load, else a new
        session with the conversation so far as context). Cancels a start or restart in progress."""
        self._set_state("starting")
        error = await self._run_lifecycle(self._reopen(), "restart")
        if error is not None:
            raise error

    def _restart_soon(self) -> None:
        """Restart without a caller to report to (a prompt sent to a stopped agent)."""
        self._set_state("starting")
        tasks.spawn(self._restart_quietly(), self._report, f"{self.key} restart")

    async def _restart_quietly(self) -> None:
        error = await self._run_lifecycle(self._reopen(), "restart")
        if error is not None:
            self.editor.notify(f"{self.key}: {error}", "error")

    async def _run_lifecycle(self, step: Coroutine[object, None, None], what: str) -> Exception | None:
        """Run ``step`` (open or reopen) as the session's one lifecycle task, after cancelling the
        one in progress. Its failure is returned (already shown in the chat), not raised."""
        previous = self._lifecycle
        task = self._lifecycle = tasks.spawn(self._after(previous, step), self._report, f"{self.key} {what}")
        return await task

    @staticmethod
    async def _after(previous: asyncio.Task[Exception | None] | None,
                     step: Coroutine[object, None, None]) -> Exception | None:
        try:
            if previous is not None and not previous.done():
                previous.cancel()
                await asyncio.wait({previous})
        except asyncio.CancelledError:
            step.close()
            raise
        try:
            await step
        except Exception as exc:
            return exc
        return None

    async def _open(self) -> None:
        self._warn_clear_text()
        try:
            response = await self._link.open()
            await self._link.attach(response)
            await mode_policy.uphold(self)  # the user's permission policy wins over the agent's mode
        except Exception as exc:
            self._failed(f"failed to start: {exc}", "the agent did not start", exc)
            raise
        self._ready()

    def _warn_clear_text(self) -> None:
        """Once per session start (not per reconnect): a ``ws://`` agent off this machine."""
        warning = remote.clear_text_warning(self.spec)
        if warning is not None:
            self.transcript.notice(warning, "error")
            self.editor.notify(f"{self.key}: {warning}", "warn")

    async def _reopen(self) -> None:
        self._cancel_questions()
        await self._stop_turn("interrupted by the restart")
        self._set_state("starting")
        self._set_recovery("")
        if self.queue:
            self.transcript.notice(f"restarting the agent; {len(self.queue)} queued prompt(s) are sent after it",
                                   "info")
        await self._link.replace_process()
        try:
            response, how = await self._link.reopen()
            await self._link.attach(response)
            await mode_policy.uphold(self)  # the user's permission policy wins over the agent's mode
        except Exception as exc:
            self._failed(f"restart failed: {exc}", "the restart failed", exc)
            raise
        self._reopened(response, how)

    def _reopened(self, response: Attached, how: str) -> None:
        self._carry_over(how)
        self.transcript.notice(notices.reopened(how, len(self._carry or "")), "info")
        self._ready()

    def _carry_over(self, how: str) -> None:
        """After a reopen: a new ACP session gets the conversation so far with the next prompt."""
        if how == NEW and self.transcript.has_prompts():
            self._carry = self.transcript.as_context(CARRY_LIMIT)
        elif how != NEW:
            self._carry = None

    def _ready(self) -> None:
        self._stopped_turn = False
        self._set_recovery("")
        self._set_state("idle")
        if self.queue:
            self._run_queue_soon()

    def _failed(self, text: str, reason: str, exc: BaseException) -> None:
        now = time.time()  # the failure's class, where it has one (failures.py)
        hint = failures.start_hint(failures.classify(failures.report_of(exc, self._agent_names()), now), now)
        self.transcript.notice("\n".join([text, *([hint] if hint else []), notices.way_back(self.restart_key)]),
                               "error")
        self._cancel_questions()
        self._fail(reason)

    def _fail(self, reason: str) -> None:
        """No agent runs: say why in the chat line; queued prompts stay, each named as not sent yet."""
        self._set_recovery(reason)
        self._set_state("failed")
        if self.queue:
            lines = [f"{notices.not_sent(p, 'the agent is not running')}" for p in self.queue]
            self.transcript.notice("\n".join([*lines, f"they stay in the queue: {notices.way_back(self.restart_key)} "
                                                      "and sends them"]), "error")

    def _replaying(self, replaying: bool) -> None:
        self._updates.replaying = replaying

    def _mode_warning(self, text: str) -> None:
        self.transcript.notice(text, "error")
        self.editor.notify(f"{self.key}: {text}", "warn")

    def _slow(self, method: str, waited: float | None, limit: float) -> None:
        """A request of the handshake (or a mode change) is slow to be answered; None: it is over."""
        if waited is None:
            if self.recovery.startswith("no answer"):
                self._set_recovery("")
            return
        self.transcript.notice(notices.slow(method, waited, limit, self.restart_key), "notice")
        self._set_recovery(f"no answer to {method} yet")

    def _exited(self, process: AgentProcess, code: int) -> None:
        """The agent process exited. Expected (closed, replaced) or reported by the start: nothing to do."""
        if process is not self.process or process.closing or self.state in ("closed", "starting"):
            return
        if reconnect.wanted(process):  # a closed connection reconnects and resumes
            self._cancel_questions()
            self._set_state("starting")
            tasks.spawn(self._reconnect_quietly(code), self._report, f"{self.key} reconnect")
            return
        self._close_terminals()
        summary = exit_summary(code)
        tail = process.stderr_tail(5)
        during_turn, self._stopped_turn = self._turn is not None or self._stopped_turn, False
        self.transcript.notice(notices.exited(summary, tail, during_turn, self.restart_key), "error")
        last = f": {tail[-1]}" if tail else ""
        self.editor.notify(f"{self.key}: {summary}{last} ({self._restart_hint()})", "error")
        self._cancel_questions()
        self._fail(f"the agent {summary.removeprefix('agent ')}")

    async def _reconnect_quietly(self, code: int) -> None:
        error = await self._run_lifecycle(self._reconnect(code), "reconnect")
        if error is not None:
            self.editor.notify(f"{self.key}: {error}", "error")

    async def _reconnect(self, code: int) -> None:
        """A remote agent's connection closed: reconnect and get back to the same session (bounded
        tries, ``reconnect.py``); after the last try the session fails and terminals are closed."""
        await self._stop_turn("interrupted: the connection to the agent was lost")
        reopened = await self._reconnector.run(code)
        if reopened is None:
            if self.state != "closed":
                self._cancel_questions()
                self._fail("the connection to the agent was lost")
                await self.terminals.close_all()  # none outlives its agent
            return
        response, how = reopened
        try:
            await self._link.attach(response)
            await mode_policy.uphold(self)  # the user's permission policy wins over the agent's mode
        except Exception as exc:
            self._failed(f"reconnect failed: {exc}", "the reconnect failed", exc)
            raise
        self._carry_over(how)
        self._ready()

    def _close_terminals(self) -> None:
        """The agent is gone: its terminals go with it."""
        tasks.spawn(self.terminals.close_all(), self._report, f"{self.key} terminals")

    async def close(self) -> None:
        """End the session: its turn, its questions, its terminals and its agent process (bounded);
        ``session/close`` first where the agent offers it."""
        if self.state != "closed":
            self._set_state("closed")
            self._cancel_questions()
            self.mcp.close()
            lifecycle = self._lifecycle
            if lifecycle is not None and not lifecycle.done():
                lifecycle.cancel()
            await self._stop_turn("interrupted: the session was closed")
            unsent = [notices.not_sent(p, "the session was closed") for p in self.queue]
            self.queue.clear()
            self.transcript.notice("\n".join(["session closed; stopping the agent", *unsent]), "info")
            await reopen.close_remote(self._link)  # session/close where offered
        await self.terminals.close_all()  # none outlives its session
        await self.process.close()

    @property
    def processes(self) -> list[AgentProcess]:
        """The agent processes this session may still have running (editor exit ends them): its
        process and those a restart replaced that are still ending."""
        return [*self._link.retiring, self.process]

    # -- prompt turns --------------------------------------------------------------

    def submit(self, prompt: Prompt) -> str:
        """Queue a prompt; it starts at once when no turn runs. Returns "started", "queued",
        "starting", or "restarting" (the agent had stopped, or ignores a cancel: it restarts first)."""
        if self.state == "closed":
            raise SessionClosedError(f"session {self.key} is closed: start a new one with :Ai new")
        self._prompting()  # a reopened session's replay ends here
        self.queue.append(prompt)
        if self.state == "failed" or self._stuck:
            why = "ignores the cancel" if self._stuck else "is not running"
            self.transcript.notice(f"the agent {why}: restarting it to send your prompt", "info")
            self._restart_soon()
            return "restarting"
        if self.state == "starting" or (self._runner is not None and not self._runner.done()):
            if self.steering.steer(prompt, self._steer_route()):  # into the running turn (steering.py)
                self._changed()
                return "steered"
            self._changed()
            return "queued" if self.state != "starting" else "starting"
        self._run_queue_soon()
        return "started"

    def edit_queue(self, prompts: list[Prompt]) -> None:
        """Replace the prompts waiting in the queue (the user edited, reordered or dropped them)."""
        self.queue.clear()
        self.queue.extend(prompts)
        self._changed()

    def _run_queue_soon(self) -> None:
        self._runner = tasks.spawn(self._run_queue(), self._report, f"{self.key} turn")

    def _can_send(self) -> bool:
        return self.state not in (*ENDED, "starting") and self.process.alive and self.session_id is not None

    async def _run_queue(self) -> None:
        while self.queue and self._can_send():
            await self.steering.settled()  # a prompt being steered is never also sent
            if not self.queue or not self._can_send():
                break
            turn = Turn(self.queue.popleft(), carry=self._carry)
            self._carry = None
            await self._run_turn(turn)
            if not turn.sent:
                break
        if self.state in TURN_STATES:
            self._set_state("idle")

    async def _run_turn(self, turn: Turn) -> None:
        self._turn = turn
        self._set_state("running")
        watch = tasks.spawn(TurnWatch(turn, self.timeouts, self._watch_hooks).run(), self._report,
                            f"{self.key} watchdog")
        process = self.process
        link = Link(self._link.connection, self._link.session, self._link.accepts,
                    lambda: process.prompts_sent)
        try:
            await self._turns.run(link, turn)
        finally:
            watch.cancel()
            self._turn_over(turn)

    def _turn_over(self, turn: Turn) -> None:
        self.failed_turns.turn_over(turn)  # a failed prompt is kept and offered back (failed_turns.py)
        self._turn = None
        self._stopped_turn = turn.agent_stopped
        self._cancelling = False
        if self._stuck or self.recovery.startswith("no output"):
            self._set_recovery("")
        self._stuck = False
        if turn.dropped:
            self.log.add("info", "lifecycle", f"dropped {turn.dropped} update(s) that came after the cancel")
        if not turn.sent:
            self.queue.appendleft(turn.prompt)
            self._carry = self._carry or turn.carry
            self.transcript.notice(f"{notices.not_sent(turn.prompt, 'the agent did not get it')}: kept in the "
                                   "queue, it is sent when the agent runs again", "error")
            self._changed()

    async def _stop_turn(self, reason: str) -> None:
        """End the running turn here (a restart, a close): the agent's answer no longer matters."""
        runner, self._runner = self._runner, None
        if runner is None or runner.done():
            return
        if self._turn is not None:
            self._turn.interrupted = ("cancelled (the agent ignored the cancel)"
                                      if self._turn.cancel_ignored else reason)
        runner.cancel()
        await asyncio.wait({runner})

    async def cancel(self) -> bool:
        """Cancel the running turn (ACP ``session/cancel``): pending permission requests are answered
        ``cancelled``, open tool calls are marked cancelled, and late output of the turn is dropped.
        An agent that does not end the turn within ``timeouts.cancel`` is shown as ignoring it."""
        turn = self._turn
        if turn is None or self.state not in TURN_STATES:
            return False
        if turn.cancelled_at is None:
            turn.cancelled_at = time.monotonic()
        self._cancelling = True
        self._cancel_questions(ended=False)
        for state in turn.open_tools():
            self.transcript.cancel_tool_call(state.tool_call_id)
        try:
            await asyncio.wait_for(self._link.connection.cancel(session_id=self._link.session), self.timeouts.cancel)
        except (TimeoutError, ConnectionError, AcpNvimError) as exc:
            self.log.add("warn", "lifecycle", f"session/cancel not delivered: {type(exc).__name__}: {exc}")
        return True

    def _steer_route(self) -> Route | None:
        """Where a prompt can be steered now; None while no sent turn runs, a cancel is under way, or
        a question of the turn is open (the user answers it first)."""
        if self._turn is None or self._cancelling or self.state != "running" or self.questions.of_owner(self.key):
            return None
        info = self.process.info
        return Route(self._link.connection, self._link.session, lambda p: self._turns.content(p, self._link.accepts),
                     steering_supported(info.field_meta if info is not None else None))

    def _agent_names(self) -> str:
        """The agent's configured name and the name it gives itself (which failure table applies)."""
        info = self.process.info
        given = info.agent_info.name if info is not None and info.agent_info is not None else ""
        return f"{self.agent_name} {given}"

    # -- the watchdog's news -----------------------------------------------------------

    def _quiet(self) -> bool:
        """The agent may be silent: it waits for the user's answer."""
        return self.state == "waiting" or bool(self.pending)

    def _silent(self, waited: float) -> None:
        self.transcript.notice(notices.silent(waited, self.restart_key), "notice")
        self._set_recovery(f"no output from the agent for {waited:.0f} s")

    def _speaks(self) -> None:
        if not self._stuck:
            self._set_recovery("")

    def _ignores_cancel(self, waited: float) -> None:
        self._stuck = True
        self.transcript.notice(notices.ignores_cancel(waited, self.restart_key), "error")
        self.editor.notify(f"{self.key}: the agent ignores the cancel ({self._restart_hint()})", "warn")
        self._set_recovery("the agent ignores the cancel")

    def _restart_hint(self) -> str:
        return f"{self.restart_key} in the chat restarts it" if self.restart_key else ":Ai restart restarts it"

    # -- modes and options -----------------------------------------------------------

    async def set_mode(self, mode_id: str) -> None:
        self.mode_watch.asked(mode_id)  # before the request: agents report the new mode before they answer
        await self.process.ask("session/set_mode", self._link.connection.set_session_mode(
            session_id=self._link.session, mode_id=mode_id))
        self.details.mode = mode_id
        self._changed()

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """``session/set_config_option``; the response carries every option's new value (an agent
        that answers with another mode than the one asked switched itself: the mode policy judges it)."""
        option = self.details.option("mode")
        if option is not None and option.id == config_id and isinstance(value, str):
            self.mode_watch.asked(value)  # before the request: agents report the new mode before they answer
        response = await self.process.ask("session/set_config_option", self._link.connection.set_config_option(
            config_id=config_id, session_id=self._link.session, value=value))
        self.details.set_options(response.config_options)
        self.details.mode_from_options()
        self.mode_watch.reported(self.details.mode)
        self._changed()

    # -- agent → client ------------------------------------------------------------

    def on_update(self, update: SessionUpdate) -> None:
        """Dispatch one ``session/update`` to the transcript and session state; after a cancel, the
        turn's late output is dropped (ACP: the turn ends with the agent's answer to the prompt)."""
        if self._holding_replay and reopen.replayed(update):  # a replay already shown
            return
        turn = self._turn
        if self._cancelling and turn is not None and self._late(update):
            turn.dropped += 1
            return
        self._updates.route(update)

    def _late(self, update: SessionUpdate) -> bool:
        if isinstance(update, ToolCallProgress):
            return update.tool_call_id not in self.transcript.tool_calls
        return isinstance(update, LATE_AFTER_CANCEL)

    # -- the wire's hot path (core/agent/wire.py → client.py) ------------

    def on_chunk(self, kind: str, text: str) -> None:
        """A streamed text chunk the wire checked by hand (no model); dropped after a cancel, as
        ``on_update`` drops the turn's late output (and a held replay)."""
        if self._holding_replay:
            return
        turn = self._turn
        if self._cancelling and turn is not None:
            turn.dropped += 1
            return
        self._updates.chunk(kind, text)

    def tell(self, text: str) -> None:
        """Something the wire dropped or repaired that the user should hear about."""
        self.editor.notify(f"{self.key}: {text}", "warn")

    def _tool_call_changed(self, state: ToolCallState) -> None:
        if self._turn is not None:
            self._turn.tools[state.tool_call_id] = state
        self.reconciler.observe(state)
        self.permissions.on_tool_call(state)

    async def request_permission(self, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption]) -> RequestPermissionResponse:
        if self._cancelling or self.ended:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return await self.permissions.handle(tool_call, options)

    # -- questions -------------------------------------------------------------------

    def _waiting(self, asked: bool) -> None:
        """The broker asks the user (True) or got the answer (False)."""
        if asked:
            self.details.asked += 1
            self._set_state("waiting")
        elif self.state == "waiting":
            self._set_state("waiting" if self.pending else "running" if self._turn is not None else "idle")

    def _cancel_questions(self, ended: bool = True) -> None:
        """Answer every permission request of this session ``cancelled`` and close its view; when the
        agent process ``ended`` (exit, restart, close), every other question of the session too."""
        for ticket in (self.questions.drop if ended else self.questions.cancel)(self.key):
            self.editor.dismiss(ticket)

    async def _choose(self, prompt: str, items: list[str]) -> int | None:
        answer = await self.questions.ask(self.key, CHOICE, lambda t: self.editor.show_choice(t, prompt, items))
        return choice_index(answer, len(items))
