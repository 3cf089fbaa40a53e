"""Usage limits end to end: the demo agent reports a spent window (``_claude/rateLimit``), fails the turn on
it with an error that names no reset time, and lifts it when the time it reported comes. The statusline and
the board show the meter; the wait resends the prompt in the same session, driven by the reported time
(the test waits for the resent prompt's answer, never for a time); ``:Ai cancel`` stops the wait."""

from __future__ import annotations

import pytest

from helpers import buffer_text, status, virt_lines, wait_for

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"


def chat(nvim) -> str:
    return buffer_text(nvim, CHAT)


def press_in_chat(nvim, keys: str) -> None:
    """Normal-mode keys in the chat window, on its first line (outside the prompt area)."""
    nvim.command(f"call win_gotoid(bufwinid('{CHAT}'))")
    nvim.command("stopinsert")
    nvim.api.win_set_cursor(0, [1, 0])
    nvim.input(keys)


def fail_on_the_limit(nvim, seconds: int) -> str:
    nvim.command(f"Ai send quota {seconds}")
    wait_for(lambda: "prompt failed · usage limit" in chat(nvim), timeout=20, what="the failed turn", nvim=nvim)
    return wait_for(lambda: next((line for line in virt_lines(nvim) if "⚠ prompt failed · usage limit" in line),
                                 None), timeout=10, what="the offer above the prompt", nvim=nvim)


def test_the_meter_shows_the_reported_limit_and_the_wait_resends_the_prompt_when_it_lifts(nvim):
    offer = fail_on_the_limit(nvim, 2)
    # the error names no reset: the offer to wait comes from the reset the agent reported in usage_update
    assert "<LocalLeader>w retries when the limit resets" in offer
    meter = wait_for(lambda: "5h limit reached · resets " in status(nvim) and status(nvim), timeout=10,
                     what="the meter in the statusline", nvim=nvim)
    assert meter.startswith("demo/1 · ")
    nvim.command("Ai board")
    wait_for(lambda: "5h limit reached · resets " in buffer_text(nvim, "acp://board"), timeout=10,
             what="the meter on the board", nvim=nvim)
    press_in_chat(nvim, "\\w")
    wait_for(lambda: "waiting for the limit to lift: the kept prompt is sent again at " in chat(nvim), timeout=10,
             what="the wait, shown in the chat", nvim=nvim)
    wait_for(lambda: "quota lifted: the prompt was resent in the same session" in chat(nvim), timeout=30,
             what="the prompt resent when the limit lifted", nvim=nvim)
    text = chat(nvim)
    assert text.index("the limit lifted: the kept prompt is sent again") < text.index("quota lifted")
    assert nvim.exec_lua("return vim.tbl_count(require('acp_nvim.state').sessions)") == 1
    # the window is allowed again; the quotas draft's `limits` field reports a weekly window at 40 %
    wait_for(lambda: "weekly ▰▰▱▱▱ 40% · resets " in status(nvim), timeout=10, what="the meter after the reset",
             nvim=nvim)
    wait_for(lambda: "weekly ▰▰▱▱▱ 40%" in buffer_text(nvim, "acp://board"), timeout=10,
             what="the board's meter after the reset", nvim=nvim)


def test_ai_cancel_stops_the_wait_and_keeps_the_prompt(nvim):
    fail_on_the_limit(nvim, 600)
    press_in_chat(nvim, "\\w")
    wait_for(lambda: "waiting for the limit to lift" in chat(nvim), timeout=10, what="the wait", nvim=nvim)
    nvim.command("Ai cancel")
    wait_for(lambda: "the wait for the limit to lift was cancelled; the prompt is kept" in chat(nvim), timeout=10,
             what="the cancelled wait", nvim=nvim)
    assert "quota lifted" not in chat(nvim)
    press_in_chat(nvim, "\\r")  # the kept prompt, sent again by hand
    wait_for(lambda: "quota lifted: the prompt was resent in the same session" in chat(nvim), timeout=30,
             what="the retried prompt", nvim=nvim)
