"""How a session's agent is doing: its turns' state, the watchdog's news, slow answers, its exit.

When the agent exits, does not answer, or ignores a cancel, the chat says so and offers the
restart key (the lifecycle's ``recovery`` holds why, as a ``Trouble``). A remote agent's closed
connection reconnects instead (``core/connection/reconnect.py``).
"""

from __future__ import annotations

import asyncio

from .. import tasks
from ..agent.process import AgentProcess, exit_summary
from ..connection import reconnect
from ..conversation import failures
from ..conversation.prompt import Link, Turn
from ..conversation.schema_ext import steering_supported
from ..conversation.steering import Route
from ..conversation.watch import WatchHooks
from ..errors import AcpNvimError
from . import notices
from .lifecycle import ENDED, State, Trouble
from .opening import Opener
from .parts import Owner


class Health:
    """The prompt queue's owner (``QueueOwner``), the watchdog's listener and the agent's hooks."""

    def __init__(self, owner: Owner, opener: Opener) -> None:
        self._s = owner
        self._opener = opener

    # -- the queue's owner -------------------------------------------------------------

    def can_send(self) -> bool:
        s = self._s
        return s.lifecycle.state not in (*ENDED, State.STARTING) and s.process.alive and s.link.session_id is not None

    def link(self) -> Link:
        link, process = self._s.link, self._s.process
        return Link(link.connection, link.session, link.accepts, lambda: process.prompts_sent)

    def turn_started(self) -> None:
        self._s.lifecycle.move(State.RUNNING)

    async def settled(self) -> None:
        """Every steering request has its outcome: a prompt being steered is never also sent."""
        await self._s.steering.settled()

    def turn_over(self, turn: Turn) -> None:
        self._s.failed_turns.turn_over(turn)  # a failed prompt is kept and offered back (failed_turns.py)
        lifecycle = self._s.lifecycle
        if lifecycle.stuck:
            lifecycle.clear()
        else:
            lifecycle.clear(Trouble.SILENT)
        lifecycle.stuck = False

    def steer_route(self) -> Route | None:
        """Where a prompt can be steered now; None while no sent turn runs, a cancel is under way, or
        a question of the session is open (the user answers it first)."""
        s = self._s
        if s.queue.turn is None or s.queue.cancelling or s.lifecycle.state != State.RUNNING \
                or s.questions.of_owner(s.key):
            return None
        info, link = s.process.info, s.link
        return Route(link.connection, link.session, lambda p: s.queue.content(p, link.accepts),
                     steering_supported(info.field_meta if info is not None else None))

    def agent_names(self) -> str:
        return failures.agent_names(self._s.agent_name, self._s.process.info)

    def drained(self) -> None:
        if self._s.lifecycle.in_turn:
            self._s.lifecycle.move(State.IDLE)

    def changed(self) -> None:
        self._s.signals.changed()

    def report(self, message: str) -> None:
        self._s.signals.report(message)

    async def cancel(self) -> bool:
        """Cancel the running turn (``Session.cancel``): its open tool calls, ``session/cancel``, then its
        questions; with no turn running, the wait for a limit to lift; False when neither runs."""
        s = self._s
        turn = s.queue.cancel() if s.lifecycle.in_turn else None
        if turn is None:
            return s.failed_turns.stop_waiting()
        for state in turn.open_tools():
            s.transcript.tools.cancel_tool_call(state.tool_call_id)
        for child in s.stream.children.running():  # the turn's cancel stops its subagents' work too
            s.transcript.tools.cancel_tool_call(child.call_id)
        # session/cancel enters the connection's send queue before the questions' answers: an agent that
        # read a bare "cancelled" answer first may take it for a refusal and end the turn end_turn
        # (opencode does), where the spec wants the stop reason "cancelled".
        async def notify() -> None:
            await s.link.connection.cancel(session_id=s.link.session)
        sending = asyncio.ensure_future(notify())
        await asyncio.sleep(0)
        s.signals.dismiss(ended=False)
        try:
            await asyncio.wait_for(sending, s.timeouts.cancel)
        except (TimeoutError, ConnectionError, AcpNvimError) as exc:
            s.log.add("warn", "lifecycle", f"session/cancel not delivered: {type(exc).__name__}: {exc}")
        return True

    # -- questions (the broker) -----------------------------------------------------------

    def waiting(self, asked: bool) -> None:
        """The broker asks the user (True) or got the answer (False)."""
        s = self._s
        if asked:
            s.details.asked += 1
            s.lifecycle.move(State.WAITING)
        elif s.lifecycle.state == State.WAITING:
            pending = s.questions.waiting(s.key)
            s.lifecycle.move(State.WAITING if pending else State.RUNNING if s.queue.turn is not None else State.IDLE)

    # -- the watchdog's news -----------------------------------------------------------------

    def watch_hooks(self) -> WatchHooks:
        return WatchHooks(last_heard=lambda: self._s.process.last_heard, quiet=self._quiet, silent=self._silent,
                          speaks=self._speaks, ignores_cancel=self._ignores_cancel)

    def _quiet(self) -> bool:
        """The agent may be silent: it waits for the user's answer."""
        s = self._s
        return s.lifecycle.state == State.WAITING or bool(s.questions.waiting(s.key))

    def _silent(self, waited: float) -> None:
        self._s.transcript.notice(notices.silent(waited, self._s.restart_key), "notice")
        self._s.lifecycle.trouble(Trouble.SILENT, f"no output from the agent for {waited:.0f} s")

    def _speaks(self) -> None:
        if not self._s.lifecycle.stuck:
            self._s.lifecycle.clear()

    def _ignores_cancel(self, waited: float) -> None:
        s = self._s
        s.lifecycle.stuck = True
        s.transcript.notice(notices.ignores_cancel(waited, s.restart_key), "error")
        s.signals.tell(f"the agent ignores the cancel ({self._restart_hint()})")
        s.lifecycle.trouble(Trouble.STUCK, "the agent ignores the cancel")

    def _restart_hint(self) -> str:
        key = self._s.restart_key
        return f"{key} in the chat restarts it" if key else ":Ai restart restarts it"

    # -- the agent's hooks (core/agent/process.py) -----------------------------------------------

    def slow(self, method: str, waited: float | None, limit: float) -> None:
        """A request of the handshake (or a mode change) is slow to be answered; None: it is over."""
        if waited is None:
            self._s.lifecycle.clear(Trouble.SLOW)
            return
        self._s.transcript.notice(notices.slow(method, waited, limit, self._s.restart_key), "notice")
        self._s.lifecycle.trouble(Trouble.SLOW, f"no answer to {method} yet")

    def exited(self, process: AgentProcess, code: int) -> None:
        """The agent process exited. Expected (closed, replaced) or reported by the start: nothing to do."""
        s = self._s
        if process is not s.process or process.closing or s.lifecycle.state in (State.CLOSED, State.STARTING):
            return
        if reconnect.wanted(process):  # a closed connection reconnects and resumes
            s.signals.dismiss()
            s.lifecycle.move(State.STARTING)
            self._opener.open_soon(self._opener.reconnect(code))
            return
        self._crashed(process, code)

    def _crashed(self, process: AgentProcess, code: int) -> None:
        s = self._s
        tasks.spawn(s.terminals.close_all(), s.signals.report, f"{s.key} terminals")  # they go with their agent
        summary, tail = exit_summary(code), process.stderr_tail(5)
        during_turn, s.queue.stopped_turn = s.queue.turn is not None or s.queue.stopped_turn, False
        s.transcript.notice(notices.exited(summary, tail, during_turn, s.restart_key), "error")
        last = f": {tail[-1]}" if tail else ""
        s.signals.tell(f"{summary}{last} ({self._restart_hint()})", "error")
        s.signals.dismiss()
        self._opener.fail(f"the agent {summary.removeprefix('agent ')}")
