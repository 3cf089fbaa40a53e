"""A Neovim older than the minimum (Debian 12's 0.7.2, from apt: `make agents` installs it) gets one
clear line naming the minimum, no Lua error, and a `:checkhealth acp_nvim` that reports the version
without crashing. The rest of the suite runs the venv's Neovim by its full path, never this one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import NVIM, ROOT

pytestmark = pytest.mark.timeout(90)

OLD_NVIM = os.environ.get("ACP_NVIM_OLD_NVIM", "/usr/bin/nvim")
MINIMUM = "0.11"
LINE = re.compile(r"^acp\.nvim needs Neovim 0\.11 or newer; this is (\d+\.\d+\.\d+), so acp\.nvim is off: "
                  r"see :help acp_nvim-requirements$")
INIT = f"""
vim.opt.runtimepath:prepend({str(ROOT)!r})
require('acp_nvim').setup({{ agents = {{ demo = {{ command = 'python3' }} }} }})
"""


def _version(nvim: str) -> tuple[int, ...]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    found = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    assert found, first
    return tuple(int(part) for part in found.groups())


@pytest.fixture(scope="module")
def old_nvim() -> str:
    if not os.access(OLD_NVIM, os.X_OK):
        reason = "apt-get is not available here" if shutil.which("apt-get") is None else "`make agents` installs it"
        pytest.skip(f"no old Neovim at {OLD_NVIM} ({reason}; ACP_NVIM_OLD_NVIM names another)")
    if _version(OLD_NVIM) >= (0, 11, 0):
        pytest.skip(f"{OLD_NVIM} is not older than {MINIMUM}")
    return OLD_NVIM


def run(nvim: str, home: Path, *commands: str) -> str:
    """``nvim`` headless with a user's init that loads the plugin and calls setup(); what it printed."""
    home.mkdir(parents=True, exist_ok=True)
    init = home / "init.lua"
    init.write_text(INIT)
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8",
           **{f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")}}
    argv = [nvim, "--headless", "-u", str(init), *(f"+{c}" for c in commands), "+qa!"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=home, timeout=60, check=False)
    return (done.stdout + done.stderr).replace("\r", "")


def test_the_suite_runs_the_venv_neovim_not_the_old_one(old_nvim):
    assert Path(NVIM).resolve() != Path(old_nvim).resolve()
    assert _version(NVIM) >= (0, 11, 0)


def test_startup_says_one_clear_line_naming_the_minimum(old_nvim, tmp_path):
    said = run(old_nvim, tmp_path / "home")
    assert LINE.match(said.strip()), said
    assert "stack traceback" not in said and "E5108" not in said and "E5113" not in said


def test_ai_repeats_the_line_and_checkhealth_reports_the_version(old_nvim, tmp_path):
    report = tmp_path / "health.txt"
    said = run(old_nvim, tmp_path / "home", "Ai send hello", "checkhealth acp_nvim", f"write! {report}")
    assert "stack traceback" not in said and "E5108" not in said and "E5113" not in said, said
    assert said.count("acp.nvim needs Neovim 0.11 or newer") == 2, said  # startup, then :Ai
    health = report.read_text()
    assert "ERROR" in health and "acp.nvim needs Neovim 0.11 or newer" in health, health
    assert "install Neovim 0.11 or newer" in health
    assert "stack traceback" not in health and "Failed to run healthcheck" not in health, health


def test_the_supported_neovim_says_nothing_of_it_and_checkhealth_names_its_version(tmp_path):
    """The bad case's counterpart: the venv's 0.11 starts silently and health says which Neovim runs."""
    report = tmp_path / "health.txt"
    said = run(NVIM, tmp_path / "home", "checkhealth acp_nvim", f"write! {report}")
    assert "needs Neovim" not in said, said
    health = report.read_text()
    assert re.search(r"OK Neovim 0\.11\.\d+ \(acp\.nvim needs 0\.11 or newer\)", health), health


def test_the_plugin_guard_and_the_version_module_name_the_same_minimum():
    guard = (ROOT / "plugin" / "acp_nvim.lua").read_text()
    assert f"if vim.fn.has('nvim-{MINIMUM}') == 0 then return require('acp_nvim.host.version').refuse() end" in guard
    assert f"M.MINIMUM = '{MINIMUM}'" in (ROOT / "lua" / "acp_nvim" / "host" / "version.lua").read_text()
