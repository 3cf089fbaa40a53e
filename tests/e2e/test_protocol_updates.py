"""The protocol's newer shapes end to end: the demo agent sends each one no pinned agent sends in the
tests (message ids, notices, compactions, an unknown kind, plan updates and removals, a subagent's
calls), over the real wire, to the real host and a real Neovim."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import NOTIFY, buffer_text, chat_blocks, notes, status, wait_for, wait_idle

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
SETUP = """
local python, root = ...
require('acp_nvim').setup({ agents = { demo = { command = python, args = { '-m', 'acp_nvim.demo_agent' },
  env = { PYTHONPATH = root } } } })
""" + NOTIFY
HIGHLIGHT_OF = """
local ns = vim.api.nvim_get_namespaces()['acp_nvim.chat.hl']
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(vim.fn.bufnr(...), ns, 0, -1, { details = true })) do
  local line = vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), m[2], m[2] + 1, false)[1]
  if line == select(2, ...) then return m[4].hl_group end
end"""


def start(nvim) -> None:
    nvim.exec_lua(SETUP, sys.executable, str(ROOT / "python"))
    nvim.command("Ai")
    wait_idle(nvim, timeout=45)


def chat(nvim) -> str:
    return buffer_text(nvim, CHAT)


def turn(nvim, prompt: str, turns: int = 1) -> str:
    """Send ``prompt`` and wait for the end of turn number ``turns``; the chat."""
    nvim.command(f"Ai send {prompt}")
    wait_for(lambda: chat(nvim).count("── turn ended") >= turns, timeout=30, what=f"the end of {prompt!r}")
    wait_idle(nvim)
    return chat(nvim)


def blocks(nvim, kind: str | None = None) -> list[str]:
    found = chat_blocks(nvim)
    return [b["text"] for b in found if kind is None or b["kind"] == kind]


def press_on(nvim, line: str, keys: str = "<CR>") -> None:
    """Normal-mode ``keys`` in the chat window on the first line that starts with ``line``."""
    nvim.command(f"call win_gotoid(bufwinid('{CHAT}'))")
    nvim.command("stopinsert")
    lines = nvim.api.buf_get_lines(nvim.funcs.bufnr(CHAT), 0, -1, False)
    row = next(i for i, text in enumerate(lines) if text.startswith(line))
    nvim.api.win_set_cursor(0, [row + 1, 0])
    nvim.input(keys)


def test_a_new_message_id_is_a_new_block_and_the_export_keeps_the_ids(nvim, tmp_path: Path):
    start(nvim)
    turn(nvim, "ids")
    assert blocks(nvim, "agent") == ["first message", "second message"]
    assert blocks(nvim, "thought") == ["> weighing it"]
    target = tmp_path / "out" / "chat.md"
    nvim.command(f"Ai export {target}")
    text = wait_for(lambda: target.exists() and target.read_text(), what="the export")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert text.startswith("# acp.nvim · demo/1\n\n<!-- acp.nvim export: agent demo, session demo-1, cwd ")
    assert "## You\n\nids" not in text and "## You\nids" in text
    assert "## demo\n\n<!-- message-id: msg-a -->\n> weighing it\n\n<!-- message-id: msg-a -->\nfirst message\n\n" \
           "<!-- message-id: msg-b -->\nsecond message" in text
    assert "── turn ended: end_turn" in text
    wait_for(lambda: any("wrote the transcript (" in n and str(target) in n for n in notes(nvim)),
             what="the export's message")


def test_the_export_never_follows_a_symlink_and_says_how_to_use_it(nvim, tmp_path: Path):
    start(nvim)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "link.md"
    link.symlink_to(victim)
    nvim.command(f"Ai export {link}")
    wait_for(lambda: any("is a symbolic link" in n for n in notes(nvim)), what="the refusal")
    assert victim.read_text() == "keep me\n" and link.is_symlink()
    nvim.command("Ai export")
    wait_for(lambda: any("usage: :Ai export {file}" in n for n in notes(nvim)), what="the usage")


def test_the_agents_notices_are_drawn_by_severity(nvim):
    start(nvim)
    turn(nvim, "notice")
    assert blocks(nvim, "agent_notice") == [
        "ℹ Demo notice", "⚠ Model fallback\n  The demo model is busy: a smaller one answers this turn.",
        '✗ MCP server "demo" failed to start\n  Its tools are unavailable in this session.']
    assert nvim.exec_lua(HIGHLIGHT_OF, CHAT, "⚠ Model fallback") == "AcpNvimWarning"
    assert nvim.exec_lua(HIGHLIGHT_OF, CHAT, '✗ MCP server "demo" failed to start') == "AcpNvimError"
    assert nvim.exec_lua(HIGHLIGHT_OF, CHAT, "ℹ Demo notice") == "AcpNvimNotice"


def test_a_compaction_is_folded_and_cr_unfolds_its_summary(nvim):
    start(nvim)
    turn(nvim, "compact")
    assert blocks(nvim, "compaction") == ["▸ conversation compacted · summary: 3 lines",
                                          "• compaction failed: nothing to compact"]
    press_on(nvim, "▸ conversation compacted")
    wait_for(lambda: "▾ conversation compacted · summary: 3 lines\n  │ The user asked for a demo.\n"
                     "  │ The agent showed notices and plans.\n  │ Nothing is left to do." in chat(nvim),
             what="the summary unfolded")
    press_on(nvim, "▾ conversation compacted")
    wait_for(lambda: "▸ conversation compacted" in chat(nvim) and "│ The user asked" not in chat(nvim),
             what="the summary folded again")


def test_an_unknown_kind_is_said_once_and_logged_whole(nvim, tmp_path: Path):
    start(nvim)
    text = turn(nvim, "unknown")
    assert text.count("the agent sent an unknown update 'hologram_update' (frames, hologramId); not shown, "
                      "the whole update is in :Ai log") == 1
    assert "the agent sent a malformed update 'notice' (title)" in text
    export = tmp_path / "log.jsonl"
    nvim.command(f"Ai log export {export}")
    entries = [json.loads(line) for line in wait_for(lambda: export.exists() and export.read_text()).splitlines()]
    logged = [e for e in entries if "session update 'hologram_update'" in e.get("summary", "")]
    assert len(logged) == 2 and json.loads(logged[1]["text"])["frames"] == [4]


def test_initialize_advertises_what_the_chat_draws(nvim, tmp_path: Path):
    start(nvim)
    export = tmp_path / "log.jsonl"
    nvim.command(f"Ai log export {export}")
    entries = [json.loads(line) for line in wait_for(lambda: export.exists() and export.read_text()).splitlines()]
    sent = next(e["message"] for e in entries if (e.get("message") or {}).get("method") == "initialize")
    caps = sent["params"]["clientCapabilities"]
    assert caps["plan"] == {} and caps["session"] == {"configOptions": {"boolean": {}}, "notices": {},
                                                      "compaction": {}}


def test_plans_by_id_update_in_place_and_a_removed_plan_says_so(nvim):
    start(nvim)
    turn(nvim, "plan-ops")
    plans = blocks(nvim, "plan")
    assert plans == ["Plan: (removed by the agent)", "Plan:\n1. read the notes\n2. write the answer"]


def test_a_subagents_calls_fold_under_its_call_and_cr_unfolds_them(nvim):
    start(nvim)
    text = turn(nvim, "subagents")
    tools = blocks(nvim, "tool")
    assert len(tools) == 1, tools
    lines = tools[0].split("\n")
    assert lines[0] == "● think · Explore the demo project (Task) · completed"
    assert lines[-1].startswith("  ▸ subagent · 3 tool calls: 3 done · 1 lines said · ")
    assert lines[-1].endswith(" · “README read; looking deeper.”"), "its last line is on the fold line"
    assert "README read; looking deeper." not in text.replace(tools[0], ""), "the subagent's text is not the answer"
    press_on(nvim, "  ▸ subagent")
    unfolded = wait_for(lambda: next((t for t in blocks(nvim, "tool") if "▾ subagent" in t), ""),
                        what="the unfolded calls")
    shown = unfolded.split("\n")
    assert shown[-3].startswith("    ● read · Read README.md · completed · "), "no (Read): the title starts with it"
    assert shown[-2].startswith("    ● think · Look for TODOs (Task) · completed · ")
    assert shown[-1].startswith("      ● read · Search for TODO (Grep) · completed · ")
    press_on(nvim, "● think · Explore the demo project")
    wait_for(lambda: any(buffer_text(nvim, name).count("the subagent said:\n  README read; looking deeper.")
                         for name in nvim.exec_lua("local out = {} for _, b in ipairs(vim.api.nvim_list_bufs()) do "
                                                   "out[#out + 1] = vim.api.nvim_buf_get_name(b) end return out")
                         if name.startswith("acp://block/")), what="the full text with what the subagent said")


def test_the_statusline_counts_running_subagents(nvim):
    start(nvim)
    nvim.command("Ai send subagents hold")
    wait_for(lambda: "2 subagents" in status(nvim), timeout=30, what="two running subagents in the statusline")
    nvim.command("Ai cancel")
    wait_for(lambda: "── turn ended" in chat(nvim), timeout=30, what="the cancelled turn's end")
    wait_for(lambda: "subagent" not in status(nvim), what="no running subagent once the turn was cancelled")
    assert "⊘ think · Explore the demo project (Task) · cancelled" in chat(nvim)



def test_a_null_title_clears_the_chat_header_and_the_board(nvim):
    start(nvim)
    turn(nvim, "title Named by the agent")
    nvim.command("Ai board")
    wait_for(lambda: "Named by the agent" in buffer_text(nvim, "acp://board"), what="the title on the board")
    assert chat(nvim).startswith("# acp.nvim · demo/1 · Named by the agent\n")
    turn(nvim, "title --clear", turns=2)
    wait_for(lambda: chat(nvim).startswith("# acp.nvim · demo/1\n"), what="the header without a title")
    wait_for(lambda: "Named by the agent" not in buffer_text(nvim, "acp://board"), what="the board without it")


def test_a_tool_call_that_arrives_after_the_cancel_ends_cancelled(nvim):
    start(nvim)
    nvim.command("Ai send late-tool")
    wait_for(lambda: "Working until you cancel." in chat(nvim), what="the turn to run")
    nvim.command("Ai cancel")
    wait_for(lambda: "── turn ended: cancelled" in chat(nvim), what="the cancelled turn's end")
    wait_idle(nvim)
    late = [t for t in blocks(nvim, "tool") if "A late tool call" in t]
    assert late and late[0].split("\n")[0] == "⊘ read · A late tool call · cancelled", (late, chat(nvim))
