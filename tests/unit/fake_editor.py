"""A recording EditorPort for core tests (the core's only seam; Neovim tests use the real one)."""

from __future__ import annotations

from typing import Any

from acp_nvim.core.port import PermissionQuestion


class FakeEditor:
    def __init__(self, answer_kind: str | None = "allow_once") -> None:
        self.ops: list[list[Any]] = []
        self.notes: list[tuple[str, str]] = []
        self.questions: list[PermissionQuestion] = []
        self.buffers: dict[str, str] = {}
        self.answer_kind = answer_kind

    async def buffer_text(self, path: str) -> str | None:
        return self.buffers.get(path)

    async def write_buffer(self, path: str, content: str) -> bool:
        if path in self.buffers:
            self.buffers[path] = content
            return True
        return False

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
