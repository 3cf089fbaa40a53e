"""Many permission requests at once, end to end: the real host and the fault matrix's agent
(``perms N`` sends N requests at once). They are shown in the order the agent sent them, each typed
answer answers the one shown and only it, and ``:Ai cancel`` answers the rest ``cancelled``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import answer_keys, wait_for

pytestmark = pytest.mark.timeout(180)


class Diary:
    """The fault agent's ``events.jsonl``: what it sent and the answers it got."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "events.jsonl"

    def events(self, kind: str) -> list[dict]:
        if not self.path.exists():
            return []
        *lines, _partial = self.path.read_text().split("\n")  # the agent may be writing the last line
        return [event for event in map(json.loads, filter(None, lines)) if event["kind"] == kind]

    def requests(self) -> list[str]:
        return [e["title"] for e in self.events("out") if e.get("method") == "session/request_permission"]

    def answers(self) -> list[tuple[str, str]]:
        return [(e["title"], e["outcome"]) for e in self.events("answer")]


def start(nvim, tmp_path: Path) -> Diary:
    folder = tmp_path / "agent"
    folder.mkdir()
    spec = {"command": sys.executable, "args": ["-m", "faults.agent"],
            "env": {"FAULT_DIR": str(folder), "PYTHONPATH": str(ROOT / "tests")}}
    nvim.exec_lua("require('acp_nvim').setup({ agents = { fault = ... }, default_agent = 'fault', "
                  "permissions = { arm_ms = 50, quiet_ms = 50 } })", spec)
    nvim.command("Ai")
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').sessions['fault/1'] or {}).state") == "idle",
             timeout=30, what="an idle session")
    return Diary(folder)


def shown(nvim, count: int) -> str | None:
    """The request in the prompt float (``perm NNN of count``), if one is up."""
    lines = nvim.exec_lua("""
        local w = require('acp_nvim.question.permission').prompt.win
        if not (w and vim.api.nvim_win_is_valid(w)) then return {} end
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)""")
    found = re.search(rf"perm \d{{3}} of {count}", "\n".join(lines))
    return found.group(0) if found else None


@pytest.mark.parametrize("count", [20, 200])
def test_requests_at_once_are_shown_in_arrival_order_and_each_answered_once(nvim, tmp_path, count):
    diary = start(nvim, tmp_path)
    nvim.command(f"Ai send perms {count}")
    arrival = wait_for(lambda: len(diary.requests()) == count and diary.requests(), timeout=60,
                       what=f"{count} requests sent")
    assert sorted(arrival) == [f"perm {i:03d} of {count}" for i in range(1, count + 1)]
    half = count // 2
    for index in range(half):
        title = wait_for(lambda: shown(nvim, count), timeout=20, what="a prompt")
        assert title == arrival[index], f"prompt {index + 1} shows {title!r}; {arrival[index]!r} arrived then"
        answer_keys(nvim, "a")
        wait_for(lambda n=index + 1: len(diary.answers()) == n, timeout=20, what=f"the answer to {title}")
        assert diary.answers()[-1] == (title, "yes"), "the key answered the request shown, and only it"
    nvim.command("Ai cancel")
    wait_for(lambda: len(diary.answers()) == count, timeout=30, what="the cancel to answer the rest")
    answers = dict(diary.answers())
    assert len(answers) == count, "each request answered exactly once"
    assert [answers[t] for t in arrival] == ["yes"] * half + ["cancelled"] * (count - half)
    pending = "return #require('acp_nvim.question.permission').pending()"
    wait_for(lambda: shown(nvim, count) is None and nvim.exec_lua(pending) == 0, timeout=10, what="no prompt left")
