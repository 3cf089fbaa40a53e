"""A Neovim started the way a shell starts it (``PWD``, ``OLDPWD``, ``HOME``, ``SHELL``, ``TERM``,
``LANG``, ``USER``: the ``nvim`` fixture does) shows every path as it is, on every surface: the chat
(the user's prompt, tool calls, the agent's text), the permission prompt, the review title, the log
buffer, its export and the session's history record."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import buffer_text, chat, wait_for
from helpers.history import record_data

pytestmark = pytest.mark.timeout(90)

REDACTED_VARIABLE = "[redacted:$"


def turns(nvim, count: int) -> str:
    return wait_for(lambda: chat(nvim).count("turn ended") >= count and chat(nvim), timeout=30,
                    what=f"{count} turn(s) to end")


def prompt_text(nvim) -> str:
    return "\n".join(nvim.exec_lua("""
        local win = require('acp_nvim.question.permission').prompt.win
        if not (win and vim.api.nvim_win_is_valid(win)) then return {} end
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)"""))


def history_records(state_home: str, workspace: Path) -> list[str]:
    paths = list(Path(state_home, "nvim", "acp_nvim", "history").rglob("*.json"))
    return [path.read_text() for path in paths if record_data(path).get("cwd") == str(workspace)]


def test_workspace_paths_are_never_redacted_as_shell_variables(nvim, workspace, nvim_env, tmp_path):
    assert nvim.funcs.getenv("PWD") == str(workspace) and nvim.funcs.getenv("OLDPWD") == str(workspace.parent)
    assert nvim.funcs.getenv("SHELL") and nvim.funcs.getenv("USER") and nvim.funcs.getenv("LANG")
    target = workspace / "notes.txt"
    target.write_text("first line\nsecond line\nthird line\n")

    nvim.command(f"Ai send read {target}")
    turns(nvim, 1)
    nvim.command(f"Ai send edit {target}")
    reviews = wait_for(lambda: nvim.exec_lua("return require('acp_nvim.review').list()"), timeout=30,
                       what="the review to open")
    titles = "\n".join(review["title"] for review in reviews)
    nvim.exec_lua("require('acp_nvim.review').decide_all(...)", reviews[0]["id"], "accepted")
    turns(nvim, 2)
    nvim.command(f"Ai send shell ls -l {workspace}")
    prompt = wait_for(lambda: "asks permission" in prompt_text(nvim) and prompt_text(nvim), timeout=30,
                      what="the permission prompt")
    nvim.exec_lua("local p = require('acp_nvim.question.permission'); p.choose(p.pending()[1].id, 'no')")
    shown = turns(nvim, 3)

    nvim.command("Ai log")
    log = wait_for(lambda: "session/update" in buffer_text(nvim, "acp://log/demo/1")
                   and buffer_text(nvim, "acp://log/demo/1"), what="the log buffer")
    export = tmp_path / "export.jsonl"
    nvim.command(f"Ai log export {export}")
    exported = wait_for(lambda: export.exists() and export.read_text().endswith("\n") and export.read_text(),
                        what="the log export")
    history = "\n".join(wait_for(lambda: history_records(nvim_env["XDG_STATE_HOME"], workspace), timeout=20,
                                 what="the history record"))

    surfaces = {"chat": shown, "review title": titles, "permission prompt": prompt, "log": log,
                "log export": exported, "history": history}
    assert {name: text for name, text in surfaces.items() if REDACTED_VARIABLE in text} == {}
    assert f"read {target}" in shown and f"edit {target}" in shown, "the user's own prompts, paths whole"
    for name in ("chat", "permission prompt", "log", "log export", "history"):
        assert str(workspace) in surfaces[name], name
    assert target.name in titles and str(workspace) not in titles, "a review title shows the path in the workspace"
    assert "± notes.txt" in shown and f"± {target}" not in shown, "the chat shows paths in the workspace relative"
