"""Drive one real agent through the plugin in headless Neovim, step by named step.

Every wait runs inside ``step(...)``: when an agent changes behaviour, the failure names the
agent and the step, and shows what the scripted model was asked and the chat's last lines.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from helpers import WaitTimeout, buffer_text, wait_for

from . import permissions
from .agents import AgentSetup, processes_with_home
from .model_server import ModelServer

T = TypeVar("T")
WAIT = 45.0
CAPTURE_NOTIFY = """
_G.acp_test_notes = {}
local show = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(_G.acp_test_notes, msg)
  return show(msg, level, opts)
end
"""


class StepFailed(AssertionError):
    """A named step of a real-agent scenario failed."""


class AgentDriver:
    """One agent session in one Neovim: send prompts, wait, answer permission requests."""

    def __init__(self, nvim: Any, setup: AgentSetup, server: ModelServer, workspace: Path) -> None:
        self.nvim = nvim
        self.setup = setup
        self.name = setup.name
        self.server = server
        self.workspace = workspace
        self.chat_name = f"acp://chat/{self.name}/1"
        self._step = "setup"

    # -- failure reporting -----------------------------------------------------------

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Run one step; any failure inside is reported as '<agent>: step <name>: ...'."""
        self._step = name
        try:
            yield
        except StepFailed:
            raise
        except Exception as exc:
            raise StepFailed(self._report(f"{type(exc).__name__}: {exc}")) from exc

    def _report(self, problem: str) -> str:
        chat = self.chat().splitlines()[-25:]
        return (f"real agent {self.name!r}, step {self._step!r}: {problem}\n"
                f"--- scripted model server (last requests) ---\n{self.server.summary()}\n"
                f"--- notifications ---\n" + "\n".join(self.notes()[-8:]) + "\n"
                f"--- chat {self.chat_name} (last lines) ---\n" + "\n".join(chat))

    def notes(self) -> list[str]:
        """Messages the plugin showed with vim.notify (kept by ``CAPTURE_NOTIFY``)."""
        try:
            return [str(n) for n in self.nvim.exec_lua("return _G.acp_test_notes or {}")]
        except Exception as exc:  # Neovim itself is gone: say so instead
            return [f"(cannot read notifications: {exc})"]

    def check(self, condition: bool, problem: str) -> None:
        """Assert inside a step, with the agent/step report."""
        if not condition:
            raise StepFailed(self._report(problem))

    def wait(self, probe: Callable[[], T], what: str, timeout: float = WAIT) -> T:
        """Poll ``probe`` until truthy; fail the current step naming ``what``."""
        try:
            return wait_for(probe, timeout, interval=0.05, what=what)
        except WaitTimeout:
            raise StepFailed(self._report(f"timed out after {timeout:g}s waiting for {what}")) from None

    # -- the plugin, as a user drives it ----------------------------------------------

    def start(self) -> None:
        """``setup()`` with the agent's preset, open the chat, wait until the session is idle."""
        with self.step("start the agent through its preset"):
            self.nvim.exec_lua(CAPTURE_NOTIFY)
            self.nvim.exec_lua(self.setup.setup_lua(), json.dumps(self.setup.env), json.dumps(self.setup.extra))
            self.nvim.command("Ai open")
            self.wait(lambda: self.state().get("state") == "idle", "the session to become idle")
            self.nvim.command("wincmd p")

    def state(self) -> dict[str, Any]:
        return self.nvim.exec_lua("return require('acp_nvim.state').current() or vim.empty_dict()") or {}

    def status(self) -> str:
        return self.nvim.exec_lua("return require('acp_nvim').status()")

    def send(self, prompt: str) -> int:
        """``:Ai send <prompt>``; returns how many turns had ended before, for ``wait_turn_end``."""
        ended = self.turns_ended()
        self.nvim.command(f"Ai send {prompt}")
        return ended

    def chat(self) -> str:
        return buffer_text(self.nvim, self.chat_name)

    def turns_ended(self) -> int:
        return self.chat().count("── turn ended:")

    def wait_chat(self, text: str, timeout: float = WAIT) -> str:
        return self.wait(lambda: text in self.chat() and self.chat(), f"{text!r} in the chat", timeout)

    def wait_turn_end(self, before: int, timeout: float = WAIT) -> str:
        """Wait for the turn started after ``before`` ended turns; return its stop reason."""
        self.wait(lambda: self.turns_ended() > before, "the end of the turn", timeout)
        self.wait(lambda: self.state().get("state") == "idle", "the session to be idle again", 10)
        return self.chat().split("── turn ended: ")[-1].split(" ")[0]

    def wait_permission(self, kind: str | None = None) -> permissions.Request:
        """The first pending permission request (of ``kind``, when given)."""
        def found() -> permissions.Request | None:
            requests = [r for r in permissions.pending(self.nvim) if kind is None or r.kind == kind]
            return requests[0] if requests else None
        return self.wait(found, f"a permission request{f' of kind {kind!r}' if kind else ''}")

    def answer(self, request: permissions.Request, verdict: str) -> None:
        permissions.answer(self.nvim, request, verdict)

    def no_permission_pending(self) -> bool:
        return not permissions.pending(self.nvim)

    def pending_requests(self) -> list[permissions.Request]:
        return permissions.pending(self.nvim)

    def log_entries(self, export: Path) -> list[dict[str, Any]]:
        """Every entry of this session's log, via ``:Ai log export`` (the user's way)."""
        export.unlink(missing_ok=True)
        self.nvim.command(f"Ai log export {export}")
        self.wait(lambda: export.exists() and export.read_text().endswith("\n"), f"the log export {export}")
        return [json.loads(line) for line in export.read_text().splitlines() if line.strip()]

    def wire_messages(self, export: Path) -> list[dict[str, Any]]:
        """The raw JSON-RPC messages of this session, via ``:Ai log export`` (the user's way)."""
        return [raw for entry in self.log_entries(export) for raw in [_raw_message(entry)] if raw is not None]

    def processes(self) -> list[int]:
        """Pids of every live process of this agent (found by its private HOME)."""
        return processes_with_home(self.setup.env["HOME"])

    def cancel(self) -> None:
        self.nvim.command("Ai cancel")

    # -- files and buffers ------------------------------------------------------------

    def open_file(self, path: Path) -> int:
        self.nvim.command(f"edit {path}")
        return self.nvim.funcs.bufnr(str(path))

    def buffer_lines(self, buf: int) -> list[str]:
        return self.nvim.api.buf_get_lines(buf, 0, -1, False)


def _raw_message(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A wire entry of the export: its JSON-RPC message plus direction and (answered) method."""
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    return {**message, "_direction": entry.get("direction"), "_method": entry.get("method")}
