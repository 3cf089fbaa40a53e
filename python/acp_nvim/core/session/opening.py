"""The one way into an ACP session: every way in (new, past, fork, restart, reconnect) is a
:class:`Way` that ``Opener.open`` runs as the session's one lifecycle task: connect, take the
modes and options, uphold the permission policy, then ready (or failed, or read-only)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from acp import RequestError

from .. import tasks
from ..agent import boxing, quirks, remote
from ..connection import mode_policy, reopen
from ..connection.capabilities import offers
from ..connection.link import NEW, Warmed
from ..connection.reopen import Reopened
from ..conversation import failures
from ..conversation.prompt import CONTEXT_INTRO, REWIND_INTRO
from ..errors import AcpNvimError, AgentMissingError
from ..transcript.export import as_context
from . import notices
from .lifecycle import State, Trouble
from .parts import Owner

FORKED = "forked"
"""How a rewind reopened the conversation when the agent forked it at a message."""
CARRY_LIMIT = 100_000
"""Characters of the conversation sent along when a restart could not reopen the session."""


async def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True)
class Way:
    """One way into an ACP session."""

    name: str
    """The lifecycle task's name: start, resume, fork, restart, reconnect."""
    failure: str
    """How the chat names its failure ("failed to start")."""
    reason: str
    """The recovery after its failure ("the agent did not start")."""
    connect: Callable[[], Awaitable[Reopened | None]]
    """The session on the agent (None: the connection is lost for good)."""
    prepare: Callable[[], Awaitable[None]] = _nothing
    """What comes first (its failure is not the way's)."""
    reopens: bool = False
    """Back on a conversation the chat shows: a new ACP session gets it as context."""
    tells: bool = False
    """The chat says how it got back (a restart)."""
    intro: str = CONTEXT_INTRO
    """What the conversation carried into a new ACP session is introduced with."""
    attached: Callable[[], None] = lambda: None
    """Right after the session took the agent's answer (modes, options): a warm start's kept updates."""


class Opener:
    """Runs a session's ways in; ``ready``, ``failed`` and ``fail`` end each one."""

    def __init__(self, owner: Owner) -> None:
        self._s = owner
        self.missing: AgentMissingError | None = None
        """The last start failed because the agent is not installed (a restart cannot help)."""

    # -- the ways in -----------------------------------------------------------------

    def new(self) -> Way:
        return Way("start", "failed to start", "the agent did not start", self._new, prepare=self._warn_clear_text)

    def past(self, session_id: str, replay: bool) -> Way:
        s = self._s
        return Way("resume", "failed to start", "the agent did not start",
                   lambda: reopen.open_past(s.link, session_id, replay, s.stream.hold), prepare=self._warn_clear_text)

    def fork(self, source_id: str) -> Way:
        return Way("fork", "failed to start", "the agent did not start", lambda: self._fork(source_id))

    def warm(self, entry: Warmed) -> Way:
        """Into a new ACP session on a process started ahead of time (``core/session/warm.py``)."""
        return Way("start", "failed to start", "the agent did not start", lambda: self._adopt(entry),
                   prepare=self._warn_clear_text, attached=entry.relay.release)

    def restart(self) -> Way:
        return Way("restart", "restart failed", "the restart failed", self._relink, prepare=self._before_restart,
                   reopens=True, tells=True)

    def rewind(self, source_id: str | None, message_id: str | None, told: list[str]) -> Way:
        """Back to the conversation before a rewound turn: a fork of ``source_id`` at the agent's message
        ``message_id`` where the agent offers it, else a new session that gets the conversation before
        the turn as context (``reopens``: the transcript's rewound turns are no longer context).
        ``told`` gets how it went."""
        return Way("rewind", "rewind failed", "the rewind could not reopen the conversation",
                   lambda: self._rewound(source_id, message_id, told), reopens=True, intro=REWIND_INTRO)

    def reconnect(self, code: int) -> Way:
        return Way("reconnect", "reconnect failed", "the reconnect failed", lambda: self._reconnect(code),
                   prepare=lambda: self._s.queue.stop("interrupted: the connection to the agent was lost"),
                   reopens=True)

    async def _new(self) -> Reopened:
        return Reopened(await self._s.link.open(), NEW)

    async def _adopt(self, entry: Warmed) -> Reopened:
        return Reopened(await self._s.link.adopt(entry), NEW)

    async def _fork(self, source_id: str) -> Reopened:
        return Reopened(await reopen.fork(self._s.link, source_id, self._s.stream.hold), NEW, replay_held=True)

    async def _rewound(self, source_id: str | None, message_id: str | None, told: list[str]) -> Reopened:
        s = self._s
        if not s.process.alive or s.process.conn is None:
            await s.link.replace_process()
            await s.process.start()
        if source_id and message_id and offers(s.process.info, "fork") and quirks.forks_at_a_message(s.process.info):
            try:
                response = await reopen.fork_at(s.link, source_id, message_id, s.stream.hold)
                told.append(FORKED)
                return Reopened(response, FORKED, replay_held=True)
            except (RequestError, AcpNvimError) as exc:
                told.append(f"the agent could not fork at the message ({exc})")
        return Reopened(await s.link.open_new(), NEW)

    async def _relink(self) -> Reopened:
        response, how = await self._s.link.reopen()
        return Reopened(response, how)

    async def _reconnect(self, code: int) -> Reopened | None:
        reopened = await self._s.reconnector.run(code)
        return Reopened(*reopened) if reopened is not None else None

    async def _warn_clear_text(self) -> None:
        """Once per session start (not per reconnect): a ``ws://`` agent off this machine."""
        warning = remote.clear_text_warning(self._s.spec)
        if warning is not None:
            self._s.signals.warn(warning)
        unboxed = await asyncio.to_thread(boxing.start_note, self._s.link.agent, self._s.spec, os.environ)
        if unboxed is not None:
            self._s.transcript.notice(unboxed, "warn")

    async def _before_restart(self) -> None:
        s = self._s
        s.signals.dismiss()
        await s.queue.stop("interrupted by the restart")
        s.lifecycle.move(State.STARTING)
        s.lifecycle.clear()
        if s.queue:
            s.transcript.notice(f"restarting the agent; {len(s.queue)} queued prompt(s) are sent after it", "info")
        await s.link.replace_process()

    # -- the one path ------------------------------------------------------------------

    async def open(self, way: Way) -> Reopened | None:
        """Run ``way`` as the session's one lifecycle task; its failure is shown in the chat and raised."""
        opened: list[Reopened | None] = []
        error = await self._s.lifecycle.run(self._enter(way, opened), way.name)
        if error is not None:
            raise error
        return opened[0] if opened else None

    def open_soon(self, way: Way) -> None:
        """``open`` without a caller to report to (a prompt sent to a stopped agent, a lost connection)."""
        tasks.spawn(self._quietly(way), self._s.signals.report, f"{self._s.key} {way.name}")

    async def _quietly(self, way: Way) -> None:
        try:
            await self.open(way)
        except Exception as exc:
            self._s.signals.tell(str(exc), "error")

    async def _enter(self, way: Way, opened: list[Reopened | None]) -> None:
        s = self._s
        await way.prepare()
        try:
            reopened = await way.connect()
            if reopened is not None and reopened.response is not None:
                await s.link.attach(reopened.response)
                way.attached()
                await mode_policy.uphold(s)  # the user's permission policy wins over the agent's mode
        except Exception as exc:
            self.failed(f"{way.failure}: {exc}", way.reason, exc)
            raise
        opened.append(reopened)
        if reopened is None:
            await self._lost()
        elif reopened.response is None:  # a past session the agent cannot continue: read-only
            s.lifecycle.move(State.CLOSED)
            await s.process.close()
        else:
            self._entered(way, reopened)

    def _entered(self, way: Way, reopened: Reopened) -> None:
        if reopened.replay_held:
            self._release_replay_at_prompt()
        if way.reopens:
            self._carry_over(reopened.how, way.intro)
        if way.tells:
            self._s.transcript.notice(notices.reopened(reopened.how, len(self._s.queue.carry or "")), "info")
        self.ready()

    async def _lost(self) -> None:
        """The reconnect's last try failed: the session fails and its terminals are closed."""
        s = self._s
        if s.lifecycle.state != State.CLOSED:
            s.signals.dismiss()
            self.fail("the connection to the agent was lost")
            await s.terminals.close_all()  # none outlives its agent

    def _release_replay_at_prompt(self) -> None:
        """The held replay ends with the next prompt; at once when one was typed while the session started."""
        stream = self._s.stream
        if self._s.queue:
            stream.hold(False)
        else:
            self._s.queue.before_next(lambda: stream.hold(False))

    def _carry_over(self, how: str, intro: str) -> None:
        """After a reopen: a new ACP session gets the conversation so far with the next prompt."""
        s = self._s
        if how == NEW and s.transcript.has_prompts():
            context = as_context(s.transcript, CARRY_LIMIT)
            s.queue.carry = intro + context if context else None
        elif how != NEW:
            s.queue.carry = None

    async def close(self) -> None:
        """The way out (``Session.close``): the turn, the questions, ``session/close`` where offered,
        the terminals and the agent process."""
        s = self._s
        if s.lifecycle.state != State.CLOSED:
            s.lifecycle.move(State.CLOSED)
            s.signals.dismiss()
            s.mcp.close()
            s.lifecycle.cancel()
            await s.queue.stop("interrupted: the session was closed")
            unsent = [notices.not_sent(p, "the session was closed") for p in s.queue.take_all()]
            s.transcript.notice("\n".join(["session closed; stopping the agent", *unsent]), "info")
            await reopen.close_remote(s.link)  # session/close where offered
        await s.terminals.close_all()  # none outlives its session
        await s.process.close()

    # -- how a way ends --------------------------------------------------------------------

    def ready(self) -> None:
        s = self._s
        s.queue.stopped_turn = False
        s.lifecycle.clear()
        s.lifecycle.move(State.IDLE)
        if s.queue:
            s.queue.run_soon()

    def failed(self, text: str, reason: str, exc: BaseException | None = None) -> None:
        s, now = self._s, time.time()
        self.missing = exc if isinstance(exc, AgentMissingError) else None
        if self.missing is not None:  # what helps is installing it, not a restart
            s.transcript.notice(f"{text}\nonce it is installed, send your prompt again", "error")
            self._s.signals.dismiss()
            self.fail(reason)
            return
        names = failures.agent_names(s.agent_name, s.process.info)
        hint = failures.start_hint(failures.classify(failures.report_of(exc, names), now), now) \
            if exc is not None else ""  # the failure's class, where it has one (failures.py)
        s.transcript.notice("\n".join([text, *([hint] if hint else []), notices.way_back(s.restart_key)]), "error")
        self._s.signals.dismiss()
        self.fail(reason)

    def fail(self, reason: str) -> None:
        """No agent runs: say why in the chat line; queued prompts stay, each named as not sent yet."""
        s = self._s
        if self.missing is None:  # the chat's restart offer; a missing agent's way forward is its install
            s.lifecycle.trouble(Trouble.DOWN, reason)
        s.lifecycle.move(State.FAILED)
        if s.queue and self.missing is not None:
            unsent = [f"not sent (the agent is not installed): {notices.preview(p.text)}" for p in s.queue.take_all()]
            s.transcript.notice("\n".join([*unsent, "once it is installed, send it again"]), "error")
        elif s.queue:
            lines = [notices.not_sent(p, "the agent is not running") for p in s.queue]
            s.transcript.notice("\n".join([*lines, f"they stay in the queue: {notices.way_back(s.restart_key)} "
                                                   "and sends them"]), "error")
