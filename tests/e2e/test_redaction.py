"""Redaction on every surface, in real Neovim with the real host and real agent processes:
the chat (a secret split across streamed chunks), notifications and the start failure's stderr,
the log buffer and its export; and the review an unasked edit on disk opens."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers import buffer_text, notify_stub, wait_for

pytestmark = pytest.mark.timeout(60)

MODE_AGENT = Path(__file__).with_name("mode_agent.py")
SECRET = "Zq8xY7wV6u5t-configured-secret"
GITHUB = "ghp_" + "a1" * 18
SETUP = """
local agent, log = ...
""" + notify_stub("acp_test_notes") + """
require('acp_nvim').setup({ agents = { probe = agent }, default_agent = 'probe', log = log })
"""


def use(nvim, agent: dict, level: str = "debug") -> None:
    nvim.exec_lua(SETUP, agent, {"level": level})


def mode_agent(**env: str) -> dict:
    return {"command": sys.executable, "args": [str(MODE_AGENT)], "env": {"MY_API_KEY": SECRET, **env}}


def notes(nvim) -> str:
    return "\n".join(nvim.exec_lua("return _G.acp_test_notes"))


def export(nvim, path: Path) -> str:
    nvim.command(f"Ai log export {path}")
    return wait_for(lambda: path.exists() and path.read_text().endswith("\n") and path.read_text(),
                    what="the log export")


def leaked(text: str) -> list[str]:
    """Pieces of the secrets found in ``text`` (a third of a secret is already too much)."""
    pieces = [SECRET[i:i + 10] for i in range(0, len(SECRET) - 9, 5)] + [GITHUB[:14], GITHUB[-14:]]
    return [piece for piece in pieces if piece in text]


@pytest.mark.parametrize("size", [1, 5, 24])
def test_a_secret_the_agent_streams_in_pieces_never_shows_in_the_chat(nvim, size):
    use(nvim, mode_agent())
    nvim.command("Ai send " + json.dumps({"op": "leak", "env": "MY_API_KEY", "size": size}))
    chat = wait_for(lambda: "turn ended" in buffer_text(nvim, "acp://chat/probe/1")
                    and buffer_text(nvim, "acp://chat/probe/1"), timeout=20, what="the turn to end")
    assert "The key is [redacted:$MY_API_KEY] and the token is [redacted] done." in chat
    assert leaked(chat) == []


def test_a_start_failure_and_its_stderr_tail_are_redacted_everywhere(nvim, tmp_path):
    script = ("import os, sys; sys.stderr.write('boot: key=' + os.environ['MY_API_KEY'] + '\\n'); "
              f"sys.stderr.write('auth: Authorization: Bearer {GITHUB}\\n'); sys.exit(3)")
    use(nvim, {"command": sys.executable, "args": ["-c", script], "env": {"MY_API_KEY": SECRET}})
    nvim.command("Ai open")
    chat = wait_for(lambda: "failed to start" in buffer_text(nvim, "acp://chat/probe/1")
                    and buffer_text(nvim, "acp://chat/probe/1"), timeout=20, what="the start failure in the chat")
    wait_for(lambda: "exited with code 3" in notes(nvim), timeout=10, what="the start failure notification")
    assert "stderr: boot: key=[redacted:$MY_API_KEY]" in chat and "Bearer [redacted]" in chat
    assert "[redacted:$MY_API_KEY]" in notes(nvim)
    assert leaked(chat) == [] and leaked(notes(nvim)) == []
    nvim.command("Ai log")
    log = wait_for(lambda: "stderr" in buffer_text(nvim, "acp://log/probe/1")
                   and buffer_text(nvim, "acp://log/probe/1"), what="the log buffer")
    assert leaked(log) == [] and leaked(export(nvim, tmp_path / "failed.jsonl")) == []


def test_the_log_buffer_and_export_never_show_a_secret_the_agent_sent(nvim, tmp_path):
    use(nvim, mode_agent(), level="trace")
    chunks = [f"token={GITHUB[:10]}", f"{GITHUB[10:]} and {SECRET} ", "the end\n"]
    nvim.command("Ai send " + json.dumps({"op": "say", "chunks": chunks}))
    wait_for(lambda: "turn ended" in buffer_text(nvim, "acp://chat/probe/1"), timeout=20, what="the turn")
    nvim.command("Ai log")
    log = wait_for(lambda: "session/update" in buffer_text(nvim, "acp://log/probe/1")
                   and buffer_text(nvim, "acp://log/probe/1"), what="the log buffer")
    text = export(nvim, tmp_path / "trace.jsonl")
    assert SECRET not in log and SECRET not in text
    assert "[redacted:$MY_API_KEY]" in text
    for line in text.splitlines():
        json.loads(line)  # the export stays valid JSON lines


def test_an_unasked_edit_opens_a_review_of_its_own_and_a_reject_puts_it_back(nvim, workspace):
    target = workspace / "target.txt"
    target.write_text("before\n")
    use(nvim, mode_agent(ACP_TEST_MODES="ask,free", ACP_TEST_ASKING="ask"))
    nvim.command("Ai open")
    chat_name = "acp://chat/probe/1"
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').current() or {}).state") == "idle",
             timeout=20, what="the session to start")
    nvim.command("Ai mode free")
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').current() or {}).mode") == "free")
    nvim.command("Ai send " + json.dumps({"op": "write", "path": str(target), "text": "after\n"}))
    review = wait_for(lambda: nvim.exec_lua("local r = require('acp_nvim.review').pending()[1] "
                                            "return r and {r.id, r.spec.files[1].left, r.spec.files[1].agent}"),
                      timeout=20, what="the review of the change on disk")
    assert review[1:] == [["before"], ["after"]]
    nvim.exec_lua("require('acp_nvim.review').decide_all(...)", review[0], "rejected")
    wait_for(lambda: target.read_text() == "before\n", timeout=20, what="the reject to put the file back")
    assert "not reviewed" not in buffer_text(nvim, chat_name)


def prompt_text(nvim) -> str:
    return "\n".join(nvim.exec_lua("""
        local win = require('acp_nvim.question.permission').prompt.win
        if not (win and vim.api.nvim_win_is_valid(win)) then return {} end
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)"""))


def test_a_permission_prompt_shows_its_title_and_command_redacted(nvim):
    use(nvim, mode_agent())
    title = f"Deploy with {SECRET}"
    command = f"curl -H 'Authorization: Bearer {GITHUB}' https://example.com"
    nvim.command("Ai send " + json.dumps({"op": "ask", "title": title, "command": command}))
    shown = wait_for(lambda: "asks permission" in prompt_text(nvim) and prompt_text(nvim), timeout=20,
                     what="the permission prompt")
    assert "Deploy with [redacted:$MY_API_KEY]" in shown and "Bearer [redacted]" in shown
    assert leaked(shown) == []
    listed = nvim.exec_lua(
        "return vim.tbl_map(function(e) return e.q.title end, require('acp_nvim.question.permission').pending())")
    assert leaked("\n".join(listed)) == []  # what :Ai permissions lists
    nvim.exec_lua("local p = require('acp_nvim.question.permission'); p.choose(p.pending()[1].id, 'no')")
    wait_for(lambda: "turn ended" in buffer_text(nvim, "acp://chat/probe/1"), timeout=20, what="the turn")
    assert leaked(buffer_text(nvim, "acp://chat/probe/1")) == []


def test_a_review_title_is_redacted(nvim, workspace):
    target = workspace / "target.txt"
    target.write_text("before\n")
    use(nvim, mode_agent(ACP_TEST_MODES="ask", ACP_TEST_ASKING="ask"))
    title = f"Write target.txt using {GITHUB}"
    nvim.command("Ai send " + json.dumps({"op": "write", "path": str(target), "text": "after\n", "title": title}))
    titles = wait_for(lambda: nvim.exec_lua(
        "return vim.tbl_map(function(r) return r.title end, require('acp_nvim.review').list())"),
        timeout=20, what="the review to open")
    assert titles == ["Write target.txt using [redacted]"]
    assert target.read_text() == "before\n"
