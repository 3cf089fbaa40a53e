"""The public Lua API (:help acp_nvim-api) in real Neovim with the demo agent: each function runs its :Ai
subcommand through the one dispatcher, so what it does is what the command does. (`toggle()` runs
`:Ai toggle`, which the layout work adds; its test comes with it.)"""

from __future__ import annotations

import pytest

from helpers import buffer_text, wait_for
from helpers.lua import NOTIFY, notes

pytestmark = pytest.mark.timeout(120)


def api(nvim, call: str):
    return nvim.exec_lua(f"return require('acp_nvim').{call}")


def chat_text(nvim, key: str) -> str:
    return buffer_text(nvim, f"acp://chat/{key}")


def ended(nvim, key: str, count: int, reason: str = "end_turn") -> str:
    return wait_for(lambda: chat_text(nvim, key).count(f"── turn ended: {reason}") >= count and chat_text(nvim, key),
                    what=f"{count} turn(s) of {key} ending ({reason})", nvim=nvim)


def test_open_send_new_and_cancel_run_their_subcommands(nvim):
    api(nvim, "open()")
    wait_for(lambda: "demo/1" in api(nvim, "status()") and "idle" in api(nvim, "status()"),
             what="open() to start the default agent", nvim=nvim)
    assert nvim.funcs.bufwinnr("acp://chat/demo/1") != -1, "its chat is shown"

    api(nvim, "send('hello from the api')")
    assert "You said: hello from the api" in ended(nvim, "demo/1", 1)

    api(nvim, "new('demo')")
    wait_for(lambda: "demo/2" in api(nvim, "status()"), what="new() to start demo/2", nvim=nvim)
    api(nvim, "send('to the first', { session = 'demo/1' })")
    assert "You said: to the first" in ended(nvim, "demo/1", 2)
    assert "to the first" not in chat_text(nvim, "demo/2")

    api(nvim, "send('slow 2000', { session = 'demo/2' })")
    wait_for(lambda: "tick 3" in chat_text(nvim, "demo/2"), what="the slow turn to stream", nvim=nvim)
    api(nvim, "cancel('demo/2')")
    ended(nvim, "demo/2", 1, "cancelled")
    assert api(nvim, "waiting()") == 0


def test_send_attaches_a_range_and_refuses_a_blank_prompt(nvim, workspace):
    (workspace / "notes.txt").write_text("first line\nsecond line\n")
    nvim.command("edit notes.txt")
    nvim.exec_lua(NOTIFY)
    api(nvim, "send('echo', { range = { 2, 2 } })")
    echoed = ended(nvim, "demo/1", 1)
    assert "second line" in echoed and "first line" not in echoed
    api(nvim, "send('   ')")
    said = wait_for(lambda: notes(nvim) or None, what="one line about the blank prompt", nvim=nvim)
    assert said == ["[acp.nvim] send(text): text must be a prompt (a string that is not blank)"]
    assert chat_text(nvim, "demo/1").count("── turn ended") == 1
