"""The Neovim implementation of the core's EditorPort."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...core.log.redact import Redactor
from ...core.port import (
    BufferState,
    BufferWrite,
    PermissionQuestion,
    QuestionForm,
    RenderOp,
    Review,
    ReviewVerdict,
    Stamp,
    TerminalSink,
    TerminalSpec,
    ThreeWay,
)
from ...core.questions import CHOICE, PERMISSION, QUESTION, REVIEW, Questions, Ticket, choice_index
from ...core.terminal.place import launch_argv
from ..bridge import LEVELS, NOTIFY, PREFIX, Bridge
from ..chat.render_queue import RenderQueue
from ..permissions.review_spec import review_table
from .buffer_cache import BufferCache

Describe = Callable[[str], dict[str, Any]]
"""A session's state for Lua (statusline, completion), by session key."""

BARRIER = "return require('acp_nvim.host.ui').took()"
"""Answered by Neovim once it has handled every call sent before it (a flush's end): the ms the
flushes took, by which the render queue sizes the next ones."""
DISMISSABLE = {PERMISSION: "acp_nvim.question.permission", REVIEW: "acp_nvim.review", QUESTION: "acp_nvim.question"}
"""The Lua module of each view a cancelled turn (or a withdrawn request) closes."""


class NvimEditor:
    """Buffers, prompts and chat rendering in Neovim, driven from the event loop.

    Questions are shown under their ticket's id; the answers Lua sends back (``answer``,
    ``review_done``) go to the shared ``Questions`` registry. The editor keeps no futures.
    """

    def __init__(self, bridge: Bridge, questions: Questions, describe: Describe) -> None:
        self.bridge = bridge
        self.questions = questions
        self.queue = RenderQueue(bridge.lua_async, lambda: bridge.lua(BARRIER), describe,
                                 lambda message: bridge.notify(message, "error"))
        self.buffer_cache = BufferCache()
        self._state_dir: str | None = None
        self._terminal_sinks: dict[str, TerminalSink] = {}
        self.redact: Callable[[str], str] = Redactor.for_env({})
        """Cleans every message and question title; the app gives it every configured agent's secrets."""
        self.watchers: list[Callable[[str], None]] = []
        """Told the key of every session whose state changed (the board)."""
        # from now on every buffer read or written is tracked with the disk state it knows
        bridge.lua_async("require('acp_nvim.host.buffers')")

    # -- files ---------------------------------------------------------------------

    async def buffer_text(self, path: str) -> str | None:
        return await self.bridge.lua("return require('acp_nvim.host.buffers').text(...)", path)

    async def read_buffer(self, path: str) -> BufferState | None:
        for _ in range(2):  # a delta that does not fit the copy: once more, with every line
            raw = await self.bridge.lua("return require('acp_nvim.host.buffers').read_delta(...)",
                                        path, *self.buffer_cache.since(path))
            state = self.buffer_cache.apply(path, raw)
            if state is not None or raw is None:
                return state
        return None

    async def apply_to_buffer(self, path: str, content: str, expected_tick: int | None,
                              with_before: bool = False, disk: Stamp | None = None) -> BufferWrite:
        await self.queue.drain()
        raw = await self.bridge.lua("return require('acp_nvim.host.buffers').apply(...)",
                                    path, content, expected_tick, with_before, list(disk) if disk else None)
        return BufferWrite(raw["status"], int(raw.get("tick") or 0), raw.get("text") or "",
                           str(raw.get("encoding") or ""))

    async def finish_buffer_write(self, path: str, tick: int, stamp: Stamp | None) -> str:
        return str(await self.bridge.lua("return require('acp_nvim.host.buffers').finish(...)",
                                         path, tick, list(stamp) if stamp else None))

    async def reload_buffer(self, path: str, content: str, stamp: Stamp | None = None) -> str:
        return str(await self.bridge.lua("return require('acp_nvim.host.buffers').reload(...)",
                                         path, content, list(stamp) if stamp else None))

    async def sync_buffer(self, path: str, stamp: Stamp | None = None) -> None:
        await self.bridge.lua("require('acp_nvim.host.buffers').sync_path(...)", path, list(stamp) if stamp else None)

    async def loaded_files(self) -> list[tuple[str, bool, int]]:
        raw, forgotten = await self.bridge.lua(
            "local b = require('acp_nvim.host.buffers') return { b.loaded(), b.take_forgotten() }")
        self.buffer_cache.forget_trackers([int(t) for t in forgotten or []])
        return [(str(p), bool(m), int(t)) for p, m, t in raw or []]

    async def drop_buffer(self, path: str) -> bool:
        """Delete the buffer of ``path`` unless it has unsaved changes (its file was removed)."""
        self.buffer_cache.forget(path)
        return bool(await self.bridge.lua("return require('acp_nvim.host.buffers').drop(...)", path))

    # -- questions -----------------------------------------------------------------

    def show_three_way(self, ticket: Ticket, request: ThreeWay) -> None:
        spec = {"path": request.path, "base": request.base, "agent": request.agent,
                "purpose": request.purpose, "title": request.title, "base_title": request.base_title,
                "theirs": request.theirs, "load": request.load}
        self.queue.call("require('acp_nvim.threeway').open(...)", ticket.id, spec)

    def show_permission(self, ticket: Ticket, question: PermissionQuestion) -> None:
        self.queue.call("require('acp_nvim.question.permission').ask(...)", ticket.id,
                        _question_table(question, self.redact))

    def show_review(self, ticket: Ticket, question: PermissionQuestion, review: Review) -> None:
        """Open the vimdiff review (or queue it behind the open one)."""
        table = review_table(review)
        table["title"] = self.redact(table["title"])  # the title only: the files are what the user reviews
        self.queue.call("require('acp_nvim.review').open(...)", ticket.id, table)

    def show_choice(self, ticket: Ticket, prompt: str, items: list[str]) -> None:
        self._show_choice(ticket, prompt, items, [])

    def _show_choice(self, ticket: Ticket, prompt: str, items: list[str], notes: list[str]) -> None:
        self.queue.call("require('acp_nvim.host.ui').select(...)", ticket.id, prompt, items, notes)

    def show_question(self, ticket: Ticket, form: QuestionForm) -> None:
        """Open the question's form buffer (lua/acp_nvim/question/init.lua) beside the chat."""
        self.queue.call("require('acp_nvim.question').open(...)", ticket.id, _form_table(form, self.redact))

    def mark_question(self, ticket: Ticket, problems: Mapping[str, str]) -> None:
        self.queue.call("require('acp_nvim.question').mark(...)", ticket.id, dict(problems))

    def dismiss(self, ticket: Ticket) -> None:
        module = DISMISSABLE.get(ticket.view)
        if module is not None:
            reason = "the agent withdrew it" if ticket.withdrawn else ""
            self.queue.call(f"require('{module}').dismiss(...)", ticket.id, reason)

    async def choose(self, prompt: str, items: list[str], notes: list[str] | None = None) -> int | None:
        """Let the user pick one of ``items`` (``vim.ui.select``): its index, or None when dismissed;
        ``notes``: a description per item, shown beside it (its ``format_item``)."""
        answer = await self.questions.ask("", CHOICE,
                                          lambda ticket: self._show_choice(ticket, prompt, items, notes or []))
        return choice_index(answer, len(items))

    def answer(self, qid: int, option_id: object) -> None:
        """An answer from Lua (prompt, three-way view, picker, question); unknown or answered ids are
        ignored. A question's answer is a table; every other answer is an option id (or nothing)."""
        ticket = self.questions.get(qid)
        if ticket is not None and ticket.view == QUESTION:
            ticket.answer(option_id if isinstance(option_id, dict) else None)
        elif ticket is not None and ticket.view != REVIEW:
            ticket.answer(option_id or None)

    def review_done(self, rid: int, verdict: object) -> None:
        """A review's verdict from Lua; a second answer for the same review is ignored."""
        ticket = self.questions.get(rid)
        if ticket is not None and ticket.view == REVIEW:
            ticket.answer(ReviewVerdict.from_editor(verdict if isinstance(verdict, dict) else {"files": []}))

    # -- terminals: lua/acp_nvim/host/terminal.lua runs them --------------------------

    async def start_terminal(self, spec: TerminalSpec, sink: TerminalSink) -> int:
        self._terminal_sinks[spec.terminal_id] = sink
        table = {"id": spec.terminal_id, "session": spec.session_key, "command": spec.command,
                 "args": list(spec.args), "env": [list(pair) for pair in spec.env], "cwd": spec.cwd,
                 "argv": [*spec.box, *launch_argv(spec.command, spec.args, spec.cwd, spec.cwd_id)]}
        raw = await self.bridge.lua("return require('acp_nvim.host.terminal').start(...)", table)
        if not isinstance(raw, dict) or raw.get("error") or not raw.get("pid"):
            self._terminal_sinks.pop(spec.terminal_id, None)
            reason = raw.get("error") if isinstance(raw, dict) else None
            raise OSError(str(reason or "the editor could not start it"))
        return int(raw["pid"])

    def kill_terminal(self, terminal_id: str) -> None:
        self.queue.call("require('acp_nvim.host.terminal').kill(...)", terminal_id)

    def release_terminal(self, terminal_id: str) -> None:
        self.queue.call("require('acp_nvim.host.terminal').release(...)", terminal_id)

    def terminal_event(self, event: str, terminal_id: str, data: object) -> None:
        """Output or exit of a terminal job, from Lua (unknown ids are ignored)."""
        sink = self._terminal_sinks.get(terminal_id)
        if sink is None:
            return
        if event == "output":
            raw = data if isinstance(data, bytes) else str(data).encode("utf-8", "surrogateescape")
            sink.output(raw)
        elif event == "exit":
            del self._terminal_sinks[terminal_id]
            sink.exited(data if isinstance(data, int) else None)

    # -- the rest ------------------------------------------------------------------

    async def state_dir(self) -> str:
        if self._state_dir is None:
            self._state_dir = str(await self.bridge.lua("return vim.fn.stdpath('state')"))
        return self._state_dir

    # -- rendering -----------------------------------------------------------------

    def render(self, session_key: str, ops: list[RenderOp]) -> None:
        self.queue.push(session_key, ops)

    def session_changed(self, session_key: str) -> None:
        self.queue.changed(session_key)
        for watcher in self.watchers:
            watcher(session_key)

    def notify(self, message: str, level: str = "info") -> None:
        # the chat shows what the message is about before the message appears
        self.queue.call(NOTIFY, PREFIX + self.redact(message), LEVELS.get(level, 2))


def _question_table(question: PermissionQuestion, redact: Callable[[str], str]) -> dict[str, Any]:
    return {
        "session": question.session_key,
        "title": redact(question.title),
        "kind": question.kind,
        "detail": redact(question.detail),
        "options": [{"id": c.option_id, "name": c.name, "kind": c.kind} for c in question.choices],
        "rules": dict(question.rules),
        "no_rule": question.no_rule,
    }


def _form_table(form: QuestionForm, redact: Callable[[str], str]) -> dict[str, Any]:
    return {
        "session": form.session_key, "agent": form.agent, "number": form.number,
        "message": redact(form.message), "scope": form.scope, "tool": redact(form.tool),
        "url": form.url, "host": form.host,
        "fields": [{"key": f.key, "title": redact(f.title), "kind": f.kind, "required": f.required,
                    "value": f.value, "hint": redact(f.hint), "description": redact(f.description),
                    "choices": list(f.choices)} for f in form.fields],
    }
