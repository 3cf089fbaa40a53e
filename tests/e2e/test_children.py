"""Subagents as child sessions end to end: the demo agent sends a subagent in the shape claude-agent-acp
sends to a client that advertises ``clientCapabilities.subagents`` (``subagent_update``, the child's own
session id), over the real wire, to the real host and a real Neovim: the child under its call in the chat,
``:Ai cancel`` on its block cancelling only it, its permission request naming it."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT
from helpers import NOTIFY, buffer_text, chat_blocks, notes, wait_for, wait_idle

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
SETUP = """
local python, root = ...
require('acp_nvim').setup({ agents = { demo = { command = python, args = { '-m', 'acp_nvim.demo_agent' },
  env = { PYTHONPATH = root } } } })
""" + NOTIFY
CHILD = "think · subagent “Explore the demo project” (Explore)"
PENDING_TITLE = "local p = require('acp_nvim.question.permission').pending()[1] return p and p.q.title"


def start(nvim) -> None:
    nvim.exec_lua(SETUP, sys.executable, str(ROOT / "python"))
    nvim.command("Ai")
    wait_idle(nvim, timeout=45)


def chat(nvim) -> str:
    return buffer_text(nvim, CHAT)


def tools(nvim) -> list[str]:
    return [b["text"] for b in chat_blocks(nvim) if b["kind"] == "tool"]


def cursor_on(nvim, line: str) -> None:
    """The cursor in the chat window, on the first line that starts with ``line``."""
    nvim.command(f"call win_gotoid(bufwinid('{CHAT}'))")
    nvim.command("stopinsert")
    lines = nvim.api.buf_get_lines(nvim.funcs.bufnr(CHAT), 0, -1, False)
    row = next(i for i, text in enumerate(lines) if text.startswith(line))
    nvim.api.win_set_cursor(0, [row + 1, 0])


def test_a_child_session_is_drawn_under_its_call_with_its_last_line(nvim):
    start(nvim)
    nvim.command("Ai send children")
    wait_for(lambda: "── turn ended" in chat(nvim), timeout=30, what="the end of the turn")
    wait_idle(nvim)
    [block] = tools(nvim)
    lines = block.split("\n")
    assert lines[0] == f"● {CHILD} · completed", block
    assert lines[-1].startswith("  ▸ subagent · 1 tool call: 1 done · 2 lines said · "), block
    assert lines[-1].endswith(" · “Found 3 TODOs.”"), block
    assert "README read; looking deeper." not in chat(nvim).replace(block, ""), "the child's text is not the answer"


def test_cancel_on_a_childs_block_cancels_only_that_child(nvim):
    start(nvim)
    nvim.command("Ai send children hold")
    wait_for(lambda: any(t.startswith(f"◐ {CHILD}") for t in tools(nvim)), timeout=30, what="the running child")
    cursor_on(nvim, f"◐ {CHILD}")
    nvim.command("Ai cancel")
    wait_for(lambda: "── turn ended" in chat(nvim), timeout=30, what="the end of the turn")
    text = chat(nvim)
    assert "The subagent was cancelled; the turn goes on." in text
    assert "── turn ended: cancelled" not in text, "the parent's turn was not cancelled"
    assert tools(nvim)[0].startswith(f"⊘ {CHILD} · cancelled")
    assert "[acp.nvim] demo/1: cancelling subagent “Explore the demo project” only; the turn goes on" in notes(nvim)


def test_cancel_on_a_subagent_without_a_session_of_its_own_cancels_nothing_and_says_so(nvim):
    start(nvim)
    nvim.command("Ai send subagents hold")
    wait_for(lambda: any(t.startswith("◐ think · Explore the demo project") for t in tools(nvim)), timeout=30,
             what="the running Task call")
    cursor_on(nvim, "◐ think · Explore the demo project")
    nvim.command("Ai cancel")
    told = wait_for(lambda: next((n for n in notes(nvim) if "cannot be cancelled alone" in n), None),
                    what="the line that says why nothing was cancelled")
    assert told.startswith("[acp.nvim] demo/1: the subagent of “Explore the demo project” runs inside the agent's turn")
    assert "── turn ended" not in chat(nvim), "the turn still runs"
    nvim.command("call win_gotoid(bufwinid('acp://chat/demo/1'))")
    nvim.api.win_set_cursor(0, [1, 0])  # the header: no subagent's block, the whole turn
    nvim.command("Ai cancel")
    wait_for(lambda: "── turn ended: cancelled" in chat(nvim), timeout=30, what="the cancelled turn")


def test_a_childs_permission_request_says_which_child_asks(nvim):
    start(nvim)
    nvim.command("Ai send children ask")
    title = wait_for(lambda: nvim.exec_lua(PENDING_TITLE), timeout=30, what="the child's permission prompt")
    assert title == "Edit notes.md — asked by subagent “Explore the demo project” (Explore)"
    nvim.exec_lua("local p = require('acp_nvim.question.permission').pending()[1] "
                  "for _, o in ipairs(p.q.options) do if o.kind == 'allow_once' then "
                  "require('acp_nvim.question.permission').choose(p.id, o.id) end end")
    wait_for(lambda: "── turn ended" in chat(nvim), timeout=30, what="the end of the turn")
    wait_idle(nvim)
    assert "2 tool calls: 2 done" in tools(nvim)[0]


def test_the_board_lists_a_running_child_under_its_session(nvim):
    start(nvim)
    nvim.command("Ai send children hold")
    wait_for(lambda: any(t.startswith(f"◐ {CHILD}") for t in tools(nvim)), timeout=30, what="the running child")
    nvim.command("Ai board")
    line = wait_for(lambda: next((text for text in buffer_text(nvim, "acp://board").split("\n")
                                  if "↳ subagent" in text), None), what="the child's line on the board")
    assert line.startswith("      ↳ subagent “Explore the demo project” (Explore) · 1 tool call · "), line
    assert line.endswith(" · “README read; looking deeper.”"), line
    nvim.command("Ai cancel")
    wait_for(lambda: "── turn ended" in chat(nvim), timeout=30, what="the end of the turn")
    wait_for(lambda: "↳ subagent" not in buffer_text(nvim, "acp://board"), what="no running child on the board")
