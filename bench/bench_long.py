"""Long sessions: 10,000 turns / 1M lines, reopened and appended to, with a UI and typed keys.

- ``long_session_resume_ms``: ``:Ai resume <id>`` of a local history record of ``TURNS`` turns of
  ``LINES`` lines each (written with the plugin's own store), until the newest turn's last line
  is in the chat buffer; each round in a fresh Neovim with a UI attached, a key typed every 10 ms
  (``long_session_resume_key_stall_ms``: the worst of them). Target: 500 ms.
- ``long_session_replay_ms``: the same conversation kept by the demo agent instead (its saved
  sessions, ``ACP_DEMO_SESSIONS_DIR``) and nothing locally: ``:Ai resume <id>`` loads it
  (``session/load``) and the agent replays every turn; from the load's answer in the session log
  (the replay is over) until the newest turn is drawn. The agent's own time to send 50 MB is
  printed beside it (``long_session_replay_total_ms``: the command to the newest turn drawn).
- ``long_chat_append_key_stall_ms``: a live chat grown to ``TURNS`` turns (the demo agent's
  ``turns`` scenario: a conversation in one turn), then another turn streamed into it, with a key
  typed every 10 ms and the user scrolling the chat (top, bottom, half pages) the whole
  time: the worst key. The A/A control (``long_chat_idle_key_stall_ms``): the same typing and
  scrolling in the same Neovim once nothing streams. Target: 16 ms.
- ``idle_cpu_long_chat_pct``: then nobody types or scrolls for 10 s, the chat still on screen with
  the UI attached: the CPU of Neovim and every process it started (host, agent), in percent of one
  core. Target: 1 %.

Neovim's own longest busy stretch (``..._loop_max_ms``) is printed beside each. Rounds:
``ACP_BENCH_LONG_ROUNDS`` (default 3) for the reopenings, one long chat (it takes a minute).
``ACP_BENCH_LONG_TURNS`` (default 10000) and ``ACP_BENCH_LONG_LINES`` (default 100) size it;
``ACP_BENCH_LONG_PARTS`` (default ``resume,replay,chat``) picks the parts.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

from harness import (
    KeyTyper,
    Nvim,
    RawRpc,
    bench_value,
    demo_spec,
    dismiss_prompt,
    install_bench_lua,
    listening_nvim,
    sandbox,
    start_session,
    wait_for,
)
from paired import spread
from report import line

ROUNDS = max(1, int(os.environ.get("ACP_BENCH_LONG_ROUNDS", "3")))
TURNS = int(os.environ.get("ACP_BENCH_LONG_TURNS", "10000"))
LINES = int(os.environ.get("ACP_BENCH_LONG_LINES", "100"))
PARTS = os.environ.get("ACP_BENCH_LONG_PARTS", "resume,replay,chat").split(",")
SESSION = "long-session-1"
TIMEOUT = 600.0
IDLE_S = 10.0
"""How long the long chat is left alone for ``idle_cpu_long_chat_pct``."""
FILLER = "the quick brown fox jumps over the lazy dog"

WATCH_LUA = """
-- the time the first line holding `marker` appears in a buffer made from now on (a chat is named
-- after it is made: every new buffer is watched)
local marker = ...
local B = _G.acp_bench
B.seen = nil
vim.api.nvim_create_autocmd('BufNew', { callback = function(ev)
  vim.api.nvim_buf_attach(ev.buf, false, { on_lines = function(_, buf, _, first, _, last)
    if B.seen then return true end
    for _, text in ipairs(vim.api.nvim_buf_get_lines(buf, first, last, false)) do
      if text:find(marker, 1, true) then B.seen = vim.uv.hrtime() return true end
    end
  end })
end })
"""


def answer(number: int) -> str:
    return "".join(f"turn {number} line {i}: {FILLER}\n" for i in range(LINES))


def last_line(number: int) -> str:
    return f"turn {number} line {LINES - 1}: {FILLER}"


# -- reopening ---------------------------------------------------------------------------------


def write_record(state: Path, cwd: str) -> None:
    """A local history record of the long conversation, as the plugin under test keeps them."""
    from acp_nvim.core.history.record import Entry, HistorySettings, SessionRecord
    from acp_nvim.core.history.store import HistoryStore

    entries = []
    for number in range(TURNS):
        entries += [Entry("user", f"## You\nquestion {number}: what comes next?"), Entry("heading", "## demo"),
                    Entry("agent", f"answer {number}\n{answer(number)}"),
                    Entry("turn_end", "── turn ended: end_turn ──")]
    now = time.time()
    record = SessionRecord(agent="demo", cwd=cwd, session_id=SESSION, created=now - 3600, updated=now,
                           title="a long session", first_prompt="question 0", entries=entries)
    store = HistoryStore(str(state), HistorySettings(max_bytes=1 << 30))
    path = store.path(cwd, "demo", SESSION)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(record.to_json(), encoding="utf-8")


def write_saved(folder: Path, cwd: str) -> None:
    """The same conversation kept by the demo agent (its ``ACP_DEMO_SESSIONS_DIR`` format)."""
    history = []
    for number in range(TURNS):
        history += [["user", f"question {number}: what comes next?"], ["agent", f"answer {number}\n{answer(number)}"]]
    data = {"id": SESSION, "cwd": cwd, "title": "a long session", "updated": "2026-12-01T00:00:00+00:00",
            "history": history}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{uuid.uuid5(uuid.NAMESPACE_URL, SESSION).hex}.json").write_text(json.dumps(data), encoding="utf-8")


def warm_host(rpc: RawRpc) -> None:
    """Wait until the Python host runs and has handled a command (a user who opened Neovim a while
    ago: the host started while they were idle)."""
    rpc.lua("vim.cmd('Ai sessions')")  # no session yet: the host says so
    wait_for(lambda: "no sessions yet" in rpc.request("nvim_exec2", "messages", {"output": True})["output"],
             60, "the host's answer", 0.05)
    dismiss_prompt(rpc)


def load_answered(nvim: Nvim, base: Path) -> float:
    """When the session log saw the answer to session/load (wall clock, seconds)."""
    export = base / f"log-{time.monotonic_ns()}.jsonl"
    nvim.rpc.request("nvim_command", f"Ai log export {export}")
    text = wait_for(lambda: export.exists() and export.read_text().endswith("\n") and export.read_text(), 60,
                    "the log export", 0.1)
    dismiss_prompt(nvim.rpc)
    for raw in text.splitlines()[1:]:
        entry = json.loads(raw)
        if entry.get("kind") == "response" and entry.get("method") == "session/load":
            return float(entry["time"])
    raise RuntimeError("no answer to session/load in the session log")


def reopen(box: Any, replay: bool) -> dict[str, float]:
    """One reopening in a fresh Neovim: ms to the newest turn drawn, and the typed keys' worst."""
    with listening_nvim(box) as nvim:
        rpc = nvim.rpc
        install_bench_lua(rpc)
        rpc.lua(WATCH_LUA, last_line(TURNS - 1))
        warm_host(rpc)
        typer = KeyTyper(nvim.address)
        typer.start()
        rpc.lua("_G.acp_bench.loop_reset()")
        sent_wall = time.time()
        sent = rpc.lua("local t = vim.uv.hrtime(); vim.cmd(...); return t", f"Ai resume {SESSION}")
        seen = wait_for(lambda: bench_value(rpc, "seen"), TIMEOUT, "the newest turn in the chat", 0.02)
        seen_wall = sent_wall + (seen - sent) / 1e9
        time.sleep(0.3)  # what follows the draw (highlighting, the agent's answer)
        keys = typer.stop_and_collect(rpc)
        figures = {"ms": (seen - sent) / 1e6, "key_stall": max(stall for _, stall in keys),
                   "loop": float(rpc.lua("return _G.acp_bench.loop.worst"))}
        if replay:
            figures["total"], figures["ms"] = figures["ms"], (seen_wall - load_answered(nvim, box.base)) * 1000
        return figures


# -- a long live chat ------------------------------------------------------------------------


class Scroller(threading.Thread):
    """The user scrolling the current window to its top and bottom and a half page at a time (single
    keys: a typed key in the middle of a two-key command would not land), a key every 50 ms."""

    KEYS: ClassVar[list[str]] = ["<C-Home>", "<C-d>", "<C-d>", "<C-End>", "<C-u>", "<C-u>", "<C-u>", "<C-End>"]

    def __init__(self, address: str) -> None:
        super().__init__(daemon=True)
        self._rpc = RawRpc(address)
        self._halt = threading.Event()

    def run(self) -> None:
        index = 0
        while not self._halt.wait(0.05):
            self._rpc.notify("nvim_input", self.KEYS[index % len(self.KEYS)])
            index += 1

    def stop(self) -> None:
        self._halt.set()
        self.join()
        self._rpc.close()


def long_chat(box: Any) -> dict[str, float]:
    with listening_nvim(box) as nvim:
        rpc = nvim.rpc
        install_bench_lua(rpc)
        start_session(rpc)
        time.sleep(0.3)
        rpc.lua("for _, w in ipairs(vim.api.nvim_list_wins()) do"
                " if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)):match('^acp://chat') then"
                " vim.api.nvim_set_current_win(w) end end vim.cmd('stopinsert')")
        figures: dict[str, float] = {}
        for phase, prompt in (("append", f"turns {TURNS} {LINES}"), ("idle", None)):
            typer, scroller = KeyTyper(nvim.address), Scroller(nvim.address)
            rpc.lua("_G.acp_bench.loop_reset() _G.acp_bench.keys = {}")
            typer.start()
            scroller.start()
            began = time.monotonic()
            if prompt is not None:
                turns = int(bench_value(rpc, "turns"))
                rpc.lua("vim.cmd(...)", f"Ai send {prompt}")
                wait_for(lambda n=turns: bench_value(rpc, "turns") > n, TIMEOUT, "the long conversation", 0.1)
                wait_for(lambda: last_line(TURNS - 1) in "\n".join(rpc.lua(
                    "local b = vim.fn.bufnr('^acp://chat') return vim.api.nvim_buf_get_lines(b, -40, -1, false)")),
                    TIMEOUT, "the last turn drawn", 0.2)
                rpc.lua("vim.cmd(...)", "Ai send flood 2000")  # and a turn more, into the 1M-line chat
                wait_for(lambda n=turns: bench_value(rpc, "turns") > n + 1, TIMEOUT, "the turn after", 0.05)
                figures["build_s"] = time.monotonic() - began
                figures["lines"] = float(rpc.lua("return vim.api.nvim_buf_line_count(vim.fn.bufnr('^acp://chat'))"))
            else:
                time.sleep(10.0)
            scroller.stop()
            keys = typer.stop_and_collect(rpc, timeout=120)
            figures[f"{phase}_key_stall"] = max(stall for _, stall in keys)
            figures[f"{phase}_loop"] = float(rpc.lua("return _G.acp_bench.loop.worst"))
            figures[f"{phase}_loop_cpu"] = float(rpc.lua("return _G.acp_bench.loop.cpu_worst"))
            figures[f"{phase}_loop_over"] = float(rpc.lua("return _G.acp_bench.loop.over"))
            print(f"  long chat {phase}: " + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()),
                  file=sys.stderr, flush=True)
        figures["idle_cpu_pct"] = idle_cpu_pct(nvim.proc.pid, IDLE_S)
        print(f"  long chat quiet: {figures['idle_cpu_pct']:.3f} % of a core over {IDLE_S:g} s",
              file=sys.stderr, flush=True)
        return figures


def _tree(root: int) -> list[int]:
    """``root`` and every process below it (Neovim, the Python host, the agent)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found


def _cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone: its time is no longer counted, nor running
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def idle_cpu_pct(root: int, seconds: float) -> float:
    """The CPU of Neovim and everything it started over ``seconds`` of nobody typing, streaming or
    scrolling, the chat on screen with the UI attached: percent of one core."""
    pids = _tree(root)
    before, began = _cpu_ticks(pids), time.monotonic()
    time.sleep(seconds)
    ticks, took = _cpu_ticks(pids) - before, time.monotonic() - began
    return 100.0 * ticks / os.sysconf("SC_CLK_TCK") / took


# -- the module ------------------------------------------------------------------------------


def main() -> None:
    local: list[dict[str, float]] = []
    replayed: list[dict[str, float]] = []
    chat: dict[str, float] = {}
    if "resume" in PARTS:
        big = f"history = {{ max_bytes = {1 << 30} }}"
        with sandbox(f"{{ agents = {{ demo = {demo_spec()} }}, {big} }}") as box:
            write_record(box.base / "state" / "nvim", str(box.workspace))
            local = [reopen(box, replay=False) for _ in range(ROUNDS)]
            for figures in local:
                print(f"  long session resume: {figures}", file=sys.stderr, flush=True)
    if "replay" in PARTS:
        saved = Path(os.environ.get("TMPDIR", "/tmp")) / f"acp-bench-saved-{os.getpid()}"
        demo = demo_spec(ACP_DEMO_SESSIONS_DIR=str(saved))
        with sandbox(f"{{ agents = {{ demo = {demo} }}, history = false }}") as box:
            write_saved(saved, str(box.workspace))
            replayed = [reopen(box, replay=True) for _ in range(ROUNDS)]
            for figures in replayed:
                print(f"  long session replay: {figures}", file=sys.stderr, flush=True)
        for path in saved.glob("*.json"):
            path.unlink()
        saved.rmdir()
    if "chat" in PARTS:
        with sandbox(f"{{ agents = {{ demo = {demo_spec()} }}, history = false }}") as box:
            chat = long_chat(box)
    report(local, replayed, chat)


def _median(rounds: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rounds)


def report(local: list[dict[str, float]], replayed: list[dict[str, float]], chat: dict[str, float]) -> None:
    line("long_session_turns", TURNS, f"turns of {LINES} lines")
    if local:
        report_resume(local)
    if replayed:
        report_replay(replayed)
    if chat:
        report_chat(chat)


def report_resume(local: list[dict[str, float]]) -> None:
    n = len(local)
    line("long_session_resume_ms", _median(local, "ms"),
         f"ms (:Ai resume of a local record to its newest turn drawn; median of {n} rounds, "
         f"{spread([r['ms'] for r in local])}; target <= 500)")
    line("long_session_resume_key_stall_ms", _median(local, "key_stall"),
         "ms (worst typed key meanwhile, median round)")
    line("long_session_resume_loop_max_ms", _median(local, "loop"), "ms (Neovim's longest busy stretch, median round)")


def report_replay(replayed: list[dict[str, float]]) -> None:
    n = len(replayed)
    line("long_session_replay_ms", _median(replayed, "ms"),
         f"ms (the agent's session/load answered to its newest turn drawn; median of {n} rounds, "
         f"{spread([r['ms'] for r in replayed])})")
    line("long_session_replay_total_ms", _median(replayed, "total"),
         "ms (:Ai resume to the newest turn drawn, the agent's listing, start and replay included)")
    line("long_session_replay_key_stall_ms", _median(replayed, "key_stall"), "ms (worst typed key meanwhile)")


def report_chat(chat: dict[str, float]) -> None:
    line("long_chat_lines", chat["lines"], "lines in the chat")
    line("long_chat_build_s", chat["build_s"], "s (the conversation streamed, drawn, and a turn more)")
    line("long_chat_append_key_stall_ms", chat["append_key_stall"],
         "ms (worst typed key while it grew and a turn more streamed, the user scrolling; target <= 16)")
    line("long_chat_idle_key_stall_ms", chat["idle_key_stall"],
         "ms (A/A control: the same typing and scrolling in the same Neovim, nothing streaming)")
    line("long_chat_append_loop_max_ms", chat["append_loop"], "ms (Neovim's longest busy stretch while it grew)")
    line("long_chat_idle_loop_max_ms", chat["idle_loop"], "ms (Neovim's longest busy stretch, nothing streaming)")
    line("idle_cpu_long_chat_pct", chat["idle_cpu_pct"],
         f"% of a core (Neovim, host and agent over {IDLE_S:g} s idle, the long chat on screen, a UI attached; "
         "target <= 1)")
    line("long_chat_append_loop_cpu_max_ms", chat["append_loop_cpu"],
         "ms (Neovim's CPU time in a busy stretch, worst: its own work, without the other processes')")
