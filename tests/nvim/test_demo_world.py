"""`make demo` as a user meets it: Neovim started as scripts/demo.py starts it (its init, its private
XDG folders) has `:help acp_nvim`, without writing into the checkout; the demo agent's `--help`
works as `:help acp_nvim-demo` says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pynvim
import pytest

from conftest import NVIM, ROOT
from helpers.demo import demo_script

pytestmark = pytest.mark.timeout(90)


DEMO = demo_script()


def start_demo(state: Path) -> pynvim.Nvim:
    """Neovim as `make demo` starts it, with its state under ``state`` (env -C: its folder and variables)."""
    sample = DEMO.sample_file(state)
    env = DEMO.environment(state, {"HOME": str(state / "home"), "PATH": "/usr/bin:/bin", "TERM": "xterm-256color"})
    argv = ["env", "-i", "-C", str(sample.parent), *(f"{k}={v}" for k, v in env.items()),
            NVIM, "-u", str(DEMO.INIT), "--embed", "--headless", str(sample)]
    instance = pynvim.attach("child", argv=argv)
    instance.command("set columns=160 lines=50")
    return instance


def messages(nvim: pynvim.Nvim) -> str:
    return nvim.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output")


def test_help_works_in_the_demo_and_nothing_is_written_into_the_checkout(tmp_path: Path) -> None:
    tags = ROOT / "doc" / "tags"
    before = tags.stat().st_mtime_ns if tags.exists() else None
    nvim = start_demo(tmp_path / "demo")
    try:
        nvim.command("help acp_nvim")
        tagged = tmp_path / "demo" / "cache" / "nvim" / "acp_nvim_help" / "doc" / "acp_nvim.txt"
        assert nvim.current.buffer.name == str(tagged)
        assert nvim.current.buffer.options["filetype"] == "help"
        nvim.command("help acp_nvim-demo")
        assert "*acp_nvim-demo*" in nvim.current.line
        with pytest.raises(pynvim.NvimError, match="E149"):
            nvim.command("help acp_nvim-no-such-tag")
    finally:
        nvim.close()
    assert (tags.stat().st_mtime_ns if tags.exists() else None) == before, "the demo writes no tags into the checkout"


def test_a_cache_folder_that_cannot_be_written_costs_only_the_help_with_one_line(tmp_path: Path) -> None:
    state = tmp_path / "demo"
    state.mkdir()
    (state / "cache").write_text("a file where the cache folder would be\n")
    nvim = start_demo(state)
    try:
        said = messages(nvim)
        assert "acp.nvim demo: :help acp_nvim is unavailable" in said and "stack traceback" not in said
        assert nvim.exec_lua("return vim.g.acp_nvim_python") == sys.executable, "the rest of the demo started"
    finally:
        nvim.close()


def test_the_demo_agent_help_names_its_scenarios(tmp_path: Path) -> None:
    helped = subprocess.run([sys.executable, "-m", "acp_nvim.demo_agent", "--help"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60, check=False)
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: python -m acp_nvim.demo_agent")
    for scenario in ("plan", "edit <abs-path>", "ask [tool|async]", "shell <command words...>"):
        assert scenario in helped.stdout
    wrong = subprocess.run([sys.executable, "-m", "acp_nvim.demo_agent", "--bogus"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60, check=False)
    assert wrong.returncode == 2 and "unrecognized arguments: --bogus" in wrong.stderr
    assert "Traceback" not in wrong.stderr
