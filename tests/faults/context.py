"""What a case works with: the Neovim, the probes, the agent's diary, and the bookkeeping that
turns into the verdict (told, usable, lost, orphans, and the reasons behind a failure)."""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .diary import Diary, kill, survivors
from .driver import Editor, wait_until
from .probes import Probes

TOLD_WITHIN = 15.0
"""Seconds within which the user must be told what happened."""
FOLLOW_UP_WITHIN = 5.0
"""Seconds a follow-up prompt may take to be answered by a healthy agent."""
EXIT_WITHIN = 8.0
"""Seconds an agent (and its children) may take to end after :Ai close, :Ai restart or :qa!."""
START_WITHIN = 20.0

TIMEOUT_WORDS = ["timed out", "timeout", "time out", "did not answer", "no answer", "not respond",
                 "unresponsive", "no output", "hung", "stalled"]
NOT_SENT = re.compile(r"(?i)not sent|unsent|dropped|not delivered|never sent|was not sent|discarded")
REFUSAL = re.compile(r"(?i)error|fail|closed|not sent|cannot|can't|refus|not running")


@dataclass
class SentPrompt:
    """A prompt the harness typed as the user: its text, marker, and what was said right after."""

    text: str
    marker: str
    notes_before: int
    at: float


@dataclass
class Bookkeeping:
    told: str | None = None
    told_checked: bool = False
    usable: bool | None = None
    lost: int = 0
    orphans: set[int] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timeline: list[tuple[float, str]] = field(default_factory=list)
    questions_from: float | None = None
    """From this moment (probe seconds) Neovim may ask the user (the watcher answers <Esc>)."""


class Ctx:
    """The case's handle on the editor and the agent; every check records into ``book``."""

    def __init__(self, ed: Editor, probes: Probes) -> None:
        self.ed = ed
        self.probes = probes
        self.diary = Diary(ed.agent_dir)
        self.book = Bookkeeping()
        self.prompts: list[SentPrompt] = []
        self._markers = itertools.count(1)
        self._t0 = probes.keys.started

    # -- the timeline ---------------------------------------------------------------------

    def mark(self, label: str) -> None:
        """Note an action at this moment (worst stalls are reported against these)."""
        self.book.timeline.append((time.perf_counter() - self._t0, label))

    def welcome_questions(self) -> None:
        """From now on a blocking question (``confirm()``) is expected, not a fault."""
        self.book.questions_from = time.perf_counter() - self._t0

    def fail(self, reason: str) -> None:
        self.book.failures.append(reason)

    def check(self, ok: object, reason: str) -> bool:
        if not ok:
            self.fail(reason)
        return bool(ok)

    def note(self, text: str) -> None:
        self.book.notes.append(text)

    def flagged_errors(self) -> None:
        """No message was echoed with Neovim's error flag: after one, the next mode message (a key typed
        in Insert mode, entering it) makes Neovim wait a second, keys and RPC requests with it."""
        flagged = list(self.ed.lua("return _G.__fault_flagged or {}"))
        reason = f"an error message with Neovim's error flag (the next typed key waits 1 s): {flagged[:2]}"
        if reason not in self.book.failures:
            self.check(not flagged, reason)

    # -- acting as the user ---------------------------------------------------------------

    def command(self, cmd: str) -> None:
        self.mark(f":{cmd}")
        error = self.ed.command(cmd)
        if error:
            self.note(f":{cmd} failed: {error[:200]}")

    def chat_command(self, cmd: str, key: str = "fault/1") -> None:
        """Run ``cmd`` from the chat of session ``key`` (so it acts on that session)."""
        if not self.ed.focus_chat(f"acp://chat/{key}"):
            self.note(f"no chat for {key} to run :{cmd} in")
        self.command(cmd)

    def start(self, expect_idle: bool = True) -> bool:
        """The first ``:Ai`` of the case (the Python host starts here)."""
        self.command("Ai")
        if not expect_idle:
            return True
        return self.check(self.ed.wait_state(("idle",), START_WITHIN), "the session did not start")

    def prompt(self, text: str) -> str:
        """Type ``text`` (plus a unique marker) in the chat and send it; returns the marker."""
        marker = f"#p{next(self._markers)}#"
        full = f"{text} {marker}"
        notes = len(self.ed.lua("return _G.__fault_notes or {}"))
        self.mark(f"prompt {full!r}")
        if not self.ed.type_prompt(full):
            self.fail(f"no chat window to type {full!r} into")
        self.prompts.append(SentPrompt(full, marker, notes, time.monotonic()))
        return marker

    def gate(self, name: str) -> None:
        """Let the agent past ``gate-<name>``."""
        self.mark(f"gate {name}")
        (self.ed.agent_dir / f"gate-{name}").touch()

    def file(self, name: str, text: str, mode: int | None = None) -> Path:
        path = self.ed.workspace / name
        path.write_text(text)
        if mode is not None:
            path.chmod(mode)
        return path

    # -- what the user was told -----------------------------------------------------------

    def told(self, needles: list[str], timeout: float = TOLD_WITHIN, chat_only: bool = False) -> str | None:
        """The criterion "the user is told what happened in words within 15 s": wait for a line
        (chat, windows, notifications, :messages) holding any of ``needles``."""
        found = self.ed.wait_for_text(needles, timeout, chat_only, ignore=[p.text for p in self.prompts])
        if not self.book.told_checked or self.book.told:
            self.book.told = found
        self.book.told_checked = True
        if found:
            self.note(f"told: {found[:200]}")
        else:
            self.fail(f"not told within {timeout:g} s (looked for any of {needles})")
        return found

    def answered(self, marker: str, timeout: float) -> bool:
        """Whether the agent's ``answer: <prompt>`` to the prompt with ``marker`` reached the chat."""
        text = next(p.text for p in self.prompts if p.marker == marker)
        return bool(self.ed.wait_for_text([f"answer: {text}"], timeout, chat_only=True))

    # -- usable afterwards --------------------------------------------------------------------

    def usable(self) -> bool:
        """The same chat works: a follow-up prompt is answered there, or one key (a chat map
        whose description mentions "restart", answered yes when it asks) restarts and re-attaches it so that it is."""
        self.book.usable = self._usable()
        if not self.book.usable:
            self.fail("the chat is not usable afterwards (follow-up unanswered, no working restart key)")
        return self.book.usable

    def _usable(self) -> bool:
        marker = self.prompt("follow up")
        if self.answered(marker, FOLLOW_UP_WITHIN):
            return True
        key = self.restart_key()
        if key is None:
            self.note(f"follow-up {marker} not answered within {FOLLOW_UP_WITHIN:g} s; the chat has no restart key")
            return False
        self.mark(f"restart key {key}")
        self.ed.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(...))", self.ed.CHAT)
        self.ed.keys(key + "1<CR>")  # the key asks first (vim.ui.select); 1 is "Restart <agent>"
        if self.answered(marker, START_WITHIN):
            return True
        if not self.ed.wait_state(("idle",), START_WITHIN):
            self.note("the restart key did not bring the session back")
            return False
        return self.answered(self.prompt("after restart"), FOLLOW_UP_WITHIN)

    def restart_key(self) -> str | None:
        """The lhs of the chat's normal-mode map whose description mentions "restart"."""
        key = self.ed.lua("""
            local buf = vim.fn.bufnr(...)
            if buf == -1 then return nil end
            for _, map in ipairs(vim.api.nvim_buf_get_keymap(buf, 'n')) do
              if (map.desc or ''):lower():find('restart', 1, true) then return map.lhs end
            end""", self.ed.CHAT)
        return str(key) if key else None

    # -- lost prompts ---------------------------------------------------------------------------

    def count_lost(self) -> None:
        """A prompt is lost when it never reached an agent and the user was not told: shown as sent
        (in the chat) without a "not sent" notice, or gone without a refusal right when sent."""
        received = "\n".join(self.diary.prompts())
        chat = "\n".join(self.ed.buffer_lines())
        notes = list(self.ed.lua("return _G.__fault_notes or {}"))
        words = [*chat.split("\n"), *notes, *self.ed.messages().split("\n")]
        state = self.ed.session()
        waiting = " ".join(state.get("queue") or []) if state.get("state") not in ("failed", "closed") else ""
        for sent in self.prompts:
            if sent.marker in received:
                continue
            if any(sent.marker in line and NOT_SENT.search(line) for line in words):
                continue
            if sent.marker in waiting or sent.marker in self._prompt_area():
                continue
            shown = any(sent.marker in line for line in chat.split("\n"))
            refused = any(REFUSAL.search(n) for n in notes[sent.notes_before:])
            if shown or not refused:
                self.book.lost += 1
                self.fail(f"prompt {sent.text!r} lost: {'shown as sent' if shown else 'gone'}, never sent, "
                          "and no word about it")

    def _prompt_area(self) -> str:
        return str(self.ed.lua("""
            local chat = require('acp_nvim.chat').chats[...]
            return chat and require('acp_nvim.prompt').text(chat) or ''""", "fault/1"))

    def lose(self, what: str) -> None:
        """Something of the user's (an edit, a file's text) is gone."""
        self.book.lost += 1
        self.fail(f"lost: {what}")

    # -- processes -------------------------------------------------------------------------------

    def expect_gone(self, pids: set[int], after: str, timeout: float = EXIT_WITHIN) -> None:
        left = survivors(pids, timeout)
        if left:
            self.book.orphans |= left
            self.fail(f"{len(left)} agent process(es) still alive {timeout:g} s after {after}: {sorted(left)}")
            kill(left)

    def quit_and_check(self) -> None:
        """``:qa!``, then every agent process of the case must end."""
        pids = self.diary.pids()
        self.dump()
        self.probes.stop()  # keys typed after :qa! would never land
        self.mark(":qa!")
        if not self.ed.quit():
            self.fail("Neovim did not exit on :qa!")
        self.expect_gone(pids, ":qa!")

    def dump(self) -> None:
        """Keep what the user saw (chat, messages) in the case folder, for a human to read."""
        try:
            (self.ed.dir / "chat.txt").write_text("\n".join(self.ed.buffer_lines()))
            (self.ed.dir / "messages.txt").write_text(self.ed.messages())
        except Exception as exc:  # a blocked or dead Neovim: nothing to keep
            self.note(f"could not keep the chat and messages: {exc}")

    def wait(self, seconds: float) -> None:
        """Let time pass with the probes running (only where time itself is the fault)."""
        wait_until(lambda: False, seconds)
