""":Ai deps in real Neovim: with no host and no Python package it makes the private venv under
stdpath('data') with pip (from this machine's package index), the host then starts from it, and a
rerun upgrades it in place. Without a Python new enough it says what to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pynvim
import pytest

from conftest import INIT, NVIM, ROOT
from helpers import buffer_text, notes, wait_for
from helpers.lua import NOTIFY
from shell_env import ENV, shell_argv

pytestmark = pytest.mark.timeout(900)  # the first run downloads the wheels

WHEELS = ROOT / ".cache" / "deps-wheels"
"""The pinned packages' wheels, downloaded once from this machine's package index and kept: :Ai deps
then installs from them (pip, no index) in seconds."""


def wheelhouse() -> Path:
    done = WHEELS / ".complete"
    if not done.exists():
        lua = (ROOT / "lua" / "acp_nvim" / "host" / "deps.lua").read_text("utf-8")
        lists = re.findall(r"^M\.(?:REQUIRED|OPTIONAL) = \{(.*?)\}$", lua, flags=re.MULTILINE)
        specs = [spec for body in lists for spec in re.findall(r"'([^']+)'", body)]
        WHEELS.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(WHEELS), *specs, "pip"],
                       check=True, timeout=900)
        done.touch()
    return WHEELS


def started(tmp_path: Path, path: str | None = None) -> pynvim.Nvim:
    """Neovim with its own data folder, no Python of acp.nvim's choosing, and pip on the kept wheels."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = [f"XDG_DATA_HOME={tmp_path / 'data'}", f"PIP_FIND_LINKS={wheelhouse()}", "PIP_NO_INDEX=1"]
    if path is not None:
        env.append(f"PATH={path}")
    argv = [ENV, *env, NVIM, "-u", INIT, "--embed", "--headless"]
    instance = pynvim.attach("child", argv=shell_argv(workspace, argv))
    instance.command(f"cd {workspace}")
    instance.command("unlet g:acp_nvim_python g:python3_host_prog")
    instance.exec_lua(NOTIFY)
    return instance


def test_ai_deps_makes_the_venv_and_the_host_starts_from_it(nvim_env, tmp_path):
    nvim = started(tmp_path)
    try:
        venv = nvim.exec_lua("return require('acp_nvim.host.deps').venv()")
        assert venv == str(tmp_path / "data" / "nvim" / "acp_nvim" / "venv")
        nvim.command("Ai deps")  # no UI: it waits, as in a plugin manager's build step
        said = notes(nvim)
        assert nvim.exec_lua("return package.loaded['acp_nvim.host'] == nil or "
                             "require('acp_nvim.host').channel == nil"), "no host for :Ai deps"
        assert len(said) == 1 and said[0].startswith("[acp.nvim] deps: ready in "), said
        assert "agent-client-protocol 0.12." in said[0] and "pynvim 0.6." in said[0] and "missing" not in said[0]
        assert "(the Python host starts from it)" in said[0]
        assert os.access(Path(venv) / "bin" / "python", os.X_OK)

        nvim.command("Ai send hello")
        wait_for(lambda: "turn ended" in buffer_text(nvim, "acp://chat/demo/1"), 60, what="a turn on the venv's host")
        started_from = nvim.exec_lua("return require('acp_nvim.host').started")
        assert started_from["python"] == str(Path(venv) / "bin" / "python")
        assert started_from["source"] == "the venv of :Ai deps"

        plan = nvim.exec_lua("return vim.tbl_map(function(s) return s[1] end, require('acp_nvim.host.deps').plan())")
        assert plan == ["the packages"], "a rerun upgrades the venv in place"
        nvim.exec_lua("_G.notes = {}")
        nvim.command("Ai deps")
        assert notes(nvim)[-1].startswith("[acp.nvim] deps: ready in "), notes(nvim)
    finally:
        nvim.command("silent! doautocmd VimLeavePre")
        nvim.close()


def test_a_python_too_old_or_none_gets_the_fix(nvim_env, tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    fake = old / "python3"
    fake.write_text('#!/bin/sh\necho \'{"python": "3.9.2", "packages": {}}\'\n')
    fake.chmod(0o755)
    nvim = started(tmp_path, path=str(old))
    try:
        nvim.command("Ai deps")
        said = notes(nvim)
        assert len(said) == 1 and "needs Python 3.11 or newer; found only" in said[0] and "3.9.2" in said[0]
        assert "apt install python3" in said[0] and "uv" in said[0], said
        nvim.exec_lua("_G.notes = {}; vim.env.PATH = ...", str(tmp_path / "nothing"))
        nvim.command("Ai deps")
        assert "no Python found on PATH" in notes(nvim)[0]
        assert not (tmp_path / "data" / "nvim" / "acp_nvim" / "venv").exists()
    finally:
        nvim.close()
