"""Export → replay round trip in real Neovim: the replayed session's chat buffer equals the original."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers import buffer_text, wait_for

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
PROMPTS = ["hello replay", "plan", "stderr 3", "usage", "title Replayed title", "garbage"]

pytestmark = pytest.mark.timeout(120)


def run_prompts(nvim, chat: str) -> str:
    for count, prompt in enumerate(PROMPTS, 1):
        nvim.command(f"Ai send {prompt}")
        wait_for(lambda c=count: buffer_text(nvim, chat).count("turn ended") >= c, timeout=30,
                 what=f"turn {count} in {chat}")
    return buffer_text(nvim, chat)


def test_export_then_replay_reproduces_the_chat_buffer(nvim, tmp_path):
    nvim.exec_lua("require('acp_nvim').setup({ log = { level = 'trace' } })")
    original = run_prompts(nvim, "acp://chat/demo/1")
    export = tmp_path / "bug-report.jsonl"
    nvim.command(f"Ai log export {export}")
    text = wait_for(lambda: export.exists() and export.read_text().endswith("\n") and export.read_text())
    header = json.loads(text.split("\n", 1)[0])
    assert header["format"] == "acp.nvim log" and header["session"] == "demo/1" and header["level"] == "trace"

    replay = {"command": sys.executable, "args": ["-m", "acp_nvim.replay", str(export)],
              "env": {"PYTHONPATH": PYTHON_DIR}}
    nvim.exec_lua("require('acp_nvim').setup({ agents = { demo = ... }, log = { level = 'trace' } })", replay)
    nvim.command("Ai new")
    wait_for(lambda: nvim.funcs.bufnr("acp://chat/demo/2") != -1)
    replayed = run_prompts(nvim, "acp://chat/demo/2")

    def body(text: str) -> list[str]:
        return text.split("\n")[1:]  # the first line names the session (demo/1 vs demo/2)

    assert body(replayed) == body(original)
    assert "Replayed title" in replayed.split("\n")[0]
