"""A first start without traces (|acp_nvim-first-start|): Neovim with its terminal UI in a pty,
started the way a shell starts it, on a Python that lacks acp.nvim's packages (an empty venv, as
before `:Ai deps`). No host starts, no traceback reaches a message, one line names `:Ai deps`
(once per Neovim), and nothing stops Neovim at a hit-enter prompt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import INIT, NVIM
from helpers import wait_for
from helpers.terminal import nvim_in_terminal
from shell_env import shell_env

pytestmark = pytest.mark.timeout(120)

MISSING = "acp.nvim's Python packages are missing: run :Ai deps"


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python without pynvim, the ACP SDK or anything else: a venv without pip (made in ~50 ms)."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    found = subprocess.run([python, "-c", "import pynvim"], capture_output=True)
    assert found.returncode != 0, "the bare venv must lack pynvim"
    return python


def messages(nvim) -> str:
    return nvim.api.exec2("messages", {"output": True})["output"]


def settled(nvim) -> bool:
    """Neovim waits for keys in normal mode (a hit-enter prompt fails the test at once)."""
    mode = nvim.api.get_mode()
    assert mode["mode"] not in ("r", "rm", "r?"), "a message stopped Neovim at a hit-enter prompt"
    return mode["mode"] == "n" and not mode["blocking"]


def test_a_python_without_the_packages_starts_no_host_and_names_ai_deps_in_one_line(nvim_env, tmp_path,
                                                                                     bare_python):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {**os.environ, **nvim_env, **shell_env(workspace), "ACP_NVIM_TEST_PYTHON": str(bare_python)}
    env.pop("TMUX", None)
    with nvim_in_terminal([NVIM, "-u", INIT], env, workspace, tmp_path / "nvim.sock") as (nvim, terminal):
        # the prestart: the packages are checked while Neovim is idle after the UI came
        wait_for(lambda: settled(nvim) and MISSING in messages(nvim), what="the one line naming :Ai deps", nvim=nvim)
        assert nvim.exec_lua("return require('acp_nvim.host').started") is None, "no host was started"
        assert messages(nvim).count(MISSING) == 1
        assert "Traceback" not in messages(nvim) and "No module named" not in messages(nvim)
        assert b"Press ENTER" not in terminal.output

        nvim.input(":Ai send hello<CR>")  # a command is answered with the same line, and nothing else
        wait_for(lambda: settled(nvim) and messages(nvim).count(MISSING) == 2, what="the command's answer", nvim=nvim)
        assert nvim.exec_lua("return require('acp_nvim.host').started") is None
        assert "Traceback" not in messages(nvim) and "Error" not in messages(nvim)
        assert b"Press ENTER" not in terminal.output

        nvim.command("checkhealth acp_nvim")
        health = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
        assert MISSING in health
