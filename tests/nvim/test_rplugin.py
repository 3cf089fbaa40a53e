"""A user who runs :UpdateRemotePlugins with acp.nvim on the runtimepath: the manifest gets nothing of
acp.nvim, and after a restart :Ai works once, on one host, with no Vim function of acp.nvim defined."""

from __future__ import annotations

import sys
from pathlib import Path

import pynvim
import pytest

from conftest import INIT, NVIM, ROOT
from helpers import buffer_text, wait_for
from shell_env import ENV, shell_argv

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"


def started(workspace: Path, manifest: Path, provider: Path) -> pynvim.Nvim:
    """Neovim with its own manifest, and Neovim's Python provider on ``provider``."""
    argv = [ENV, f"NVIM_RPLUGIN_MANIFEST={manifest}", NVIM, "-u", INIT, "--embed", "--headless",
            "--cmd", f"let g:python3_host_prog = '{provider}'"]
    instance = pynvim.attach("child", argv=shell_argv(workspace, argv))
    instance.command(f"cd {workspace}")
    return instance


def hosts(nvim: pynvim.Nvim) -> list[dict]:
    return [chan for chan in nvim.api.list_chans() if (chan.get("client") or {}).get("type") == "host"]


def test_update_remote_plugins_registers_nothing_and_ai_works_once_after_a_restart(nvim_env, tmp_path):
    workspace, manifest = tmp_path / "workspace", tmp_path / "rplugin.vim"
    workspace.mkdir()
    # the provider's Python finds `acp_nvim` only in rplugin/python3, as a user's Python would
    provider = tmp_path / "python3"
    provider.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}/rplugin/python3" exec "{sys.executable}" "$@"\n')
    provider.chmod(0o755)
    first = started(workspace, manifest, provider)
    try:
        first.command("UpdateRemotePlugins")
        # what the provider's host made of the plugin: loaded without an error, and no spec
        path = str(ROOT / "rplugin" / "python3" / "acp_nvim")
        first.call("remote#host#RegisterPlugin", "python3", path, [])
        specs = first.funcs.rpcrequest(first.call("remote#host#Require", "python3"), "specs", path)
        said = first.api.exec2("messages", {"output": True})["output"]
    finally:
        first.close()
    assert specs == 0 and "Encountered" not in said and "acp_nvim" not in said, said
    assert manifest.exists() and "acp_nvim" not in manifest.read_text(), "nothing of acp.nvim in the manifest"

    again = started(workspace, manifest, provider)
    try:
        again.command("Ai send hello")
        wait_for(lambda: "turn ended" in buffer_text(again, CHAT), 30, what="the turn")
        assert len(hosts(again)) == 1, "one host: acp.nvim's own"
        assert again.funcs.getcompletion("AcpNvim", "function") == []
        assert again.funcs.exists(":Ai") == 2 and again.funcs.exists("*remote#host#IsRunning") in (0, 1)
        assert again.eval("remote#host#IsRunning('python3')") == 0, "Neovim's provider host never started"
        assert buffer_text(again, CHAT).count("hello") >= 1
    finally:
        again.command("silent! doautocmd VimLeavePre")
        again.close()
