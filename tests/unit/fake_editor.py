"""A recording EditorPort for core tests (the core's only seam; Neovim tests use the real one).

It implements every port method (``test_port.py`` checks it against the protocol). Questions
are answered at once through their ticket: a prompt with the option of kind ``answer_kind``;
a review by accepting (allow kinds) or rejecting (reject kinds) every file as the agent
proposed it; ``answer_kind`` None dismisses both. With ``hold`` True nothing is answered: the
tickets wait in ``tickets`` for the test to answer (or a cancel to close them).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from acp_nvim.core.files.opener import file_id_of
from acp_nvim.core.port import (
    NEW_FILE,
    BufferState,
    BufferWrite,
    FileId,
    FileVerdict,
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
from acp_nvim.core.questions import Ticket


def _file_now(path: str) -> FileId:
    try:
        return file_id_of(os.stat(path, follow_symlinks=False))
    except OSError:
        return NEW_FILE


class FakeEditor:
    def __init__(self, answer_kind: str | None = "allow_once", *, hold: bool = False, state_dir: str = "") -> None:
        self.ops: list[RenderOp] = []
        self.notes: list[tuple[str, str]] = []
        self.questions: list[PermissionQuestion] = []
        self.reviews: list[Review] = []
        self.tickets: list[Ticket] = []
        self.dismissed: list[Ticket] = []
        self.buffers: dict[str, str] = {}
        self.sources: dict[str, FileId | None] = {}
        """A buffer's source when it is not the file at its path now (the default)."""
        self.answer_kind = answer_kind
        self.hold = hold
        self.three_way_outcome = "mine"
        self.choice: int | None = None
        self.forms: list[QuestionForm] = []
        self.form_answer: object = {"action": "decline"}
        """What a shown question is answered (a dict as the editor sends it, or None)."""
        self.marks: list[dict[str, str]] = []
        self._state_dir = state_dir
        self.terminals: dict[str, tuple[TerminalSpec, TerminalSink]] = {}
        self.killed: list[str] = []
        self.released: list[str] = []
        self.start_error: OSError | None = None

    # -- buffers -------------------------------------------------------------------

    async def buffer_text(self, path: str) -> str | None:
        return self.buffers.get(path)

    async def read_buffer(self, path: str) -> BufferState | None:
        text = self.buffers.get(path)
        if text is None:
            return None
        return BufferState(path, text, 1, False, source=self.sources.get(path, _file_now(path)))

    async def apply_to_buffer(self, path: str, content: str, expected_tick: int | None,
                              with_before: bool = False, disk: Stamp | None = None) -> BufferWrite:
        if path not in self.buffers:
            return BufferWrite("not_loaded")
        before, self.buffers[path] = self.buffers[path], content
        return BufferWrite("applied", 2, before)  # the service writes the disk, then finishes

    async def finish_buffer_write(self, path: str, tick: int, stamp: Stamp | None) -> str:
        return "saved" if stamp is not None else "undone"

    async def reload_buffer(self, path: str, content: str, stamp: Stamp | None = None) -> str:
        if path not in self.buffers:
            return "not_loaded"
        self.buffers[path] = content
        return "reloaded"

    async def sync_buffer(self, path: str, stamp: Stamp | None = None) -> None:
        pass

    async def loaded_files(self) -> list[tuple[str, bool, int]]:
        return [(path, False, 1) for path in self.buffers]

    # -- questions -----------------------------------------------------------------

    def show_permission(self, ticket: Ticket, question: PermissionQuestion) -> None:
        self.questions.append(question)
        self._answer(ticket, next((c.option_id for c in question.choices if c.kind == self.answer_kind), None))

    def show_review(self, ticket: Ticket, question: PermissionQuestion, review: Review) -> None:
        self.questions.append(question)
        self.reviews.append(review)
        self._answer(ticket, self.review_verdict(review))

    def review_verdict(self, review: Review) -> ReviewVerdict | None:
        """The verdict ``answer_kind`` stands for: accept or reject every file, or None (dismissed)."""
        if self.answer_kind is None:
            return None
        accept = self.answer_kind.startswith("allow")
        return ReviewVerdict(tuple(FileVerdict(f.path, f.agent_text if accept else None) for f in review.files))

    def show_three_way(self, ticket: Ticket, request: ThreeWay) -> None:
        self._answer(ticket, self.three_way_outcome)

    def show_choice(self, ticket: Ticket, prompt: str, items: list[str]) -> None:
        self._answer(ticket, None if self.choice is None else str(self.choice))

    def show_question(self, ticket: Ticket, form: QuestionForm) -> None:
        self.forms.append(form)
        self._answer(ticket, self.form_answer)

    def mark_question(self, ticket: Ticket, problems: Mapping[str, str]) -> None:
        self.marks.append(dict(problems))
        self._answer(ticket, {"action": "cancel"})

    def dismiss(self, ticket: Ticket) -> None:
        self.dismissed.append(ticket)

    def _answer(self, ticket: Ticket, value: object) -> None:
        self.tickets.append(ticket)
        if not self.hold:
            ticket.answer(value)

    # -- terminals: recorded; a kill ends the command at once (SIGTERM) -------------------

    async def start_terminal(self, spec: TerminalSpec, sink: TerminalSink) -> int:
        if self.start_error is not None:
            raise self.start_error
        self.terminals[spec.terminal_id] = (spec, sink)
        return 4000 + len(self.terminals)

    def kill_terminal(self, terminal_id: str) -> None:
        self.killed.append(terminal_id)
        self.terminals[terminal_id][1].exited(128 + 15)

    def release_terminal(self, terminal_id: str) -> None:
        self.released.append(terminal_id)
        self.terminals[terminal_id][1].exited(128 + 15)

    # -- the rest ------------------------------------------------------------------

    async def state_dir(self) -> str:
        return self._state_dir

    def render(self, session_key: str, ops: list[RenderOp]) -> None:
        self.ops.extend(ops)

    def session_changed(self, session_key: str) -> None:
        pass

    def notify(self, message: str, level: str = "info") -> None:
        self.notes.append((message, level))
