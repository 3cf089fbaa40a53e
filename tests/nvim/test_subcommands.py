"""The :Ai subcommand registry: the generated Lua table is current, and completion and the
Lua-side subcommands work from it in a real Neovim without starting the Python host."""

from __future__ import annotations

import subprocess

import pytest

from acp_nvim.nvim.commands import subcommand_docs
from acp_nvim.nvim.commands.subcommands import SUBCOMMANDS
from conftest import NVIM, ROOT
from helpers import capture_notes

pytestmark = pytest.mark.timeout(30)

COMPLETE = "return require('acp_nvim').complete(...)"


def complete(nvim, cmdline: str) -> list[str]:
    arglead = "" if cmdline.endswith(" ") else cmdline.rsplit(" ", 1)[-1]
    return nvim.exec_lua(COMPLETE, arglead, cmdline, len(cmdline))


def host_running(nvim) -> bool:
    return bool(nvim.call("remote#host#IsRunning", "python3"))


def test_every_subcommand_has_a_help_tag_and_an_index_line(tmp_path):
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "acp_nvim.txt").write_text((ROOT / "doc" / "acp_nvim.txt").read_text())
    subprocess.run([NVIM, "--headless", "-u", "NONE", "-c", f"helptags {doc}", "-c", "qa!"],
                   check=True, capture_output=True, timeout=20)
    tags = {line.split("\t", 1)[0] for line in (doc / "tags").read_text().splitlines()}
    index = subcommand_docs.vimdoc_index()
    readme = (ROOT / "README.md").read_text()
    for sub in SUBCOMMANDS:
        assert f":Ai-{sub.name}" in tags, f"doc/acp_nvim.txt has no *:Ai-{sub.name}* tag"
        assert any(line.startswith(f"  |:Ai-{sub.name}|") for line in index)
        assert all(f"`{form}`".replace("|", "\\|") in readme for form in sub.forms())


def test_lua_table_lists_every_subcommand_in_order(nvim):
    names = nvim.exec_lua(
        "return vim.tbl_map(function(s) return s.name end, require('acp_nvim.host.subcommands').list)")
    assert names == [sub.name for sub in SUBCOMMANDS]
    assert complete(nvim, "Ai ") == names


def test_completion_follows_the_registry_without_starting_the_host(nvim):
    nvim.exec_lua("require('acp_nvim').setup({agents = {gem = {command = 'gemini'}}})")
    assert complete(nvim, "Ai p") == ["paste", "prev", "permissions", "policy"]
    assert set(complete(nvim, "Ai new ")) == {"--worktree", "demo", "gem"}
    assert complete(nvim, "Ai new gem ") == ["--worktree"]
    assert complete(nvim, "Ai new gem --worktree ") == []
    assert complete(nvim, "Ai worktree ") == ["list", "diff", "merge", "remove"]
    assert complete(nvim, "Ai new g") == ["gem"]
    assert complete(nvim, "Ai policy ") == ["ask", "auto-edit", "trust"]
    assert complete(nvim, "Ai queue e") == ["edit"]
    assert complete(nvim, "Ai rules ") == ["remove"]
    assert complete(nvim, "Ai log level w") == ["warn"]
    assert complete(nvim, "Ai log ") == ["export", "level"], "no sessions yet"
    assert complete(nvim, "Ai cancel ") == []
    assert complete(nvim, "Ai nosuch ") == []
    assert set(nvim.funcs.getcompletion("Ai ", "cmdline")) == {sub.name for sub in SUBCOMMANDS}
    assert not host_running(nvim)


def test_dynamic_sources_read_the_state_kept_in_lua(nvim, workspace):
    (workspace / "notes.txt").write_text("x\n")
    nvim.exec_lua("""require('acp_nvim.state').update('demo/1',
        {state = 'idle', current = true, modes = {'ask', 'code'}})""")
    assert complete(nvim, "Ai mode ") == ["ask", "code"]
    assert complete(nvim, "Ai open ") == ["demo/1"]
    assert complete(nvim, "Ai log ") == ["export", "level", "demo/1"]
    assert complete(nvim, "Ai log export no") == ["notes.txt"]
    assert not host_running(nvim)


def test_lua_side_subcommand_runs_without_the_host(nvim):
    capture_notes(nvim)
    nvim.command("Ai permissions")
    assert nvim.exec_lua("return _G.notes") == ["[acp.nvim] no permission request is pending"]
    assert not host_running(nvim)
