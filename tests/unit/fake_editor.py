"""A recording EditorPort for core tests (the core's only seam; Neovim tests use the real one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_nvim.core.port import BufferState, BufferWrite, PermissionQuestion, ThreeWay


class FakeEditor:
    def __init__(self, answer_kind: str | None = "allow_once") -> None:
        self.ops: list[list[Any]] = []
        self.notes: list[tuple[str, str]] = []
        self.questions: list[PermissionQuestion] = []
        self.buffers: dict[str, str] = {}
        self.answer_kind = answer_kind

    async def buffer_text(self, path: str) -> str | None:
        return self.buffers.get(path)

    async def read_buffer(self, path: str) -> BufferState | None:
        text = self.buffers.get(path)
        return None if text is None else BufferState(path, text, 1, False)

    async def apply_to_buffer(self, path: str, content: str, expected_tick: int | None,
                              with_before: bool = False) -> BufferWrite:
        if path not in self.buffers:
            return BufferWrite("not_loaded")
        before, self.buffers[path] = self.buffers[path], content
        Path(path).write_text(content)  # the port saves the buffer: disk and buffer agree
        return BufferWrite("written", 2, before)

    async def reload_buffer(self, path: str, content: str) -> str:
        if path not in self.buffers:
            return "not_loaded"
        self.buffers[path] = content
        return "reloaded"

    async def sync_buffer(self, path: str) -> None:
        pass

    async def loaded_files(self) -> list[tuple[str, bool, int]]:
        return [(path, False, 1) for path in self.buffers]

    async def three_way(self, request: ThreeWay) -> str:
        return "mine"

    async def ask_permission(self, question: PermissionQuestion) -> str | None:
        self.questions.append(question)
        for choice in question.choices:
            if choice.kind == self.answer_kind:
                return choice.option_id
        return None

    def dismiss_permission(self, question: PermissionQuestion) -> None:
        pass

    def render(self, session_key: str, ops: list[list[Any]]) -> None:
        self.ops.extend(ops)

    def session_changed(self, session_key: str) -> None:
        pass

    def notify(self, message: str, level: str = "info") -> None:
        self.notes.append((message, level))

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)
