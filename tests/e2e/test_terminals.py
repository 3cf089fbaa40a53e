"""Terminals (terminal/*) end to end: real Neovim, real host, the demo agent's terminal scenario."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_nvim.core.agent.process_tree import descendants
from helpers import buffer_text, chat, wait_for

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"


def turns(nvim, count: int) -> str:
    return wait_for(lambda: chat(nvim).count("── turn ended") >= count and chat(nvim),
                    timeout=30, what=f"{count} turn(s) to end")


def start(nvim, policy: str = "trust") -> None:
    nvim.exec_lua("require('acp_nvim').setup({ permissions = { policy = ... } })", policy)
    nvim.command("Ai")
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').sessions['demo/1'] or {}).state") == "idle",
             timeout=20, what="the session to start")


def send(nvim, text: str) -> None:
    nvim.command(f"Ai send {text}")


def terminals(nvim) -> dict:
    return nvim.exec_lua("""
        local out = {}
        for id, t in pairs(require('acp_nvim.host.terminal').terminals) do
          out[id] = { pid = t.pid, running = t.running, buf = t.buf }
        end
        return out""")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def test_a_command_runs_in_a_terminal_buffer_and_the_agent_reads_its_output(nvim, workspace):
    start(nvim)
    send(nvim, "terminal printf 'hello\\nterminal world\\n'; exit 3")
    text = turns(nvim, 1)
    assert "exit code 3 signal None; truncated False" in text
    assert "terminal world" in text
    assert "▸ terminal term-" in text and "· exited 3" in text  # the live view under the tool call, final
    nvim.command("Ai log")
    log = wait_for(lambda: "terminal/create" in buffer_text(nvim, "acp://log/demo/1")
                   and buffer_text(nvim, "acp://log/demo/1"), what="the log to show the terminal requests")
    assert "terminal/wait_for_exit" in log and "exited 3" in log


def test_huge_output_is_cut_to_the_agents_limit_at_a_character(nvim, workspace):
    start(nvim)
    send(nvim, "terminal --limit=1001 yes 'é0123456789' | head -c 3000000")
    text = turns(nvim, 1)
    assert "truncated True" in text
    reported = int(text.split("truncated True; ", 1)[1].split(" bytes", 1)[0])
    assert 0 < reported <= 1001
    assert "�" not in text.split("truncated True", 1)[1]  # never half a character


def test_bad_input_gets_clear_errors_and_the_session_goes_on(nvim, workspace):
    start(nvim)
    send(nvim, "terminal --cwd=/ ls")
    assert "refused cwd '/': outside the workspace roots" in turns(nvim, 1)
    send(nvim, "terminal --id=bogus echo x")
    assert "unknown terminal 'bogus'" in turns(nvim, 2)
    send(nvim, "terminal --release-twice echo x")
    text = turns(nvim, 3)
    assert "exit code 0" in text and "second release:" in text and "unknown terminal 'term-" in text
    send(nvim, "terminal --kill sleep 100")
    text = turns(nvim, 4)
    assert "exit code None signal SIG" in text


def test_cr_on_the_tool_call_opens_the_terminal_buffer_and_closing_the_session_leaves_no_orphan(nvim, workspace):
    start(nvim)
    send(nvim, "terminal --no-wait echo started; sleep 1000")
    turns(nvim, 1)
    found = wait_for(lambda: terminals(nvim) or None, what="the terminal")
    (tid, info), = found.items()
    wait_for(lambda: "started" in chat(nvim), what="the live output in the chat")
    pids = [info["pid"], *(pid for pid, _ in descendants(info["pid"]))]  # the shell and its sleep
    assert all(alive(pid) for pid in pids)
    nvim.api.set_current_win(nvim.funcs.bufwinid(CHAT))
    lines = nvim.api.buf_get_lines(nvim.funcs.bufnr(CHAT), 0, -1, False)
    row = next(i for i, line in enumerate(lines) if f"▸ terminal {tid}" in line)
    nvim.api.win_set_cursor(0, [row + 1, 0])
    nvim.api.input("<CR>")
    wait_for(lambda: nvim.api.get_current_buf().number == info["buf"], what="the terminal buffer")
    assert nvim.current.buffer.options["buftype"] == "terminal"
    assert nvim.current.buffer.name.endswith(f"acp://terminal/demo/1/{tid}")
    nvim.command("Ai close")
    wait_for(lambda: not any(alive(pid) for pid in pids), timeout=15, what="every terminal process to end")
    wait_for(lambda: terminals(nvim)[tid]["running"] is False, what="the job's exit")


def test_an_uncovered_command_is_put_to_the_user_who_can_refuse_it(nvim, workspace):
    start(nvim, policy="ask")
    send(nvim, "terminal --no-ask touch made-by-agent")
    wait_for(lambda: nvim.exec_lua("return #require('acp_nvim.question.permission').pending()") == 1, timeout=20,
             what="the permission prompt")
    asked = nvim.exec_lua("return require('acp_nvim.question.permission').pending()[1]")
    assert asked["q"]["kind"] == "execute" and "touch made-by-agent" in asked["q"]["title"]
    nvim.exec_lua("require('acp_nvim.question.permission').choose(..., 'acp.nvim-refuse')", asked["id"])
    assert "did not allow running" in turns(nvim, 1)
    assert not (workspace / "made-by-agent").exists()
    assert not terminals(nvim)


def test_an_allowed_execute_call_covers_its_terminal(nvim, workspace):
    start(nvim, policy="ask")
    send(nvim, "terminal touch made-by-agent")
    wait_for(lambda: nvim.exec_lua("return #require('acp_nvim.question.permission').pending()") == 1, timeout=20,
             what="the agent's permission request")
    asked = nvim.exec_lua("return require('acp_nvim.question.permission').pending()[1]")
    allow = next(o["id"] for o in asked["q"]["options"] if o["kind"] == "allow_once")
    nvim.exec_lua("require('acp_nvim.question.permission').choose(...)", asked["id"], allow)
    assert "exit code 0" in turns(nvim, 1)  # no second question for the terminal itself
    assert (workspace / "made-by-agent").exists()
    assert os.path.getsize(workspace / "made-by-agent") == 0
