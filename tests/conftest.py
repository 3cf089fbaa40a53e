"""Shared fixtures: a real headless Neovim per test (the plugin starts its own Python host)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(ROOT / "tests" / "unit"))  # its recording port (fake_editor) serves the e2e core tests too

from shell_env import shell_argv  # noqa: E402  (the tests folder is on the path only from here)

NVIM = str(Path(sys.executable).parent / "nvim")
INIT = str(ROOT / "tests" / "minimal_init.vim")
UNIT = ROOT / "tests" / "unit"


TIMEOUT_FLOOR = 4 * float(os.environ.get("ACP_TEST_WAIT_FLOOR", "90"))
"""No test is stopped sooner (s): a test waits through several ``wait_for`` calls, each allowed
``WAIT_FLOOR`` on a loaded machine, and its own failing wait says more than a timeout does."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("timeout")
        if marker is None or (marker.args and marker.args[0] < TIMEOUT_FLOOR):
            item.add_marker(pytest.mark.timeout(TIMEOUT_FLOOR), append=False)


@pytest.fixture(autouse=True)
def unit_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test under tests/unit starts no process (helpers/tier.py): ``make check`` needs no Neovim, no agent."""
    if UNIT in Path(request.node.path).parents:
        from helpers.tier import refuse_processes

        refuse_processes(monkeypatch)


@pytest.fixture(scope="session")
def nvim_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Isolated XDG dirs (and rplugin manifest: nothing of another install leaks in)."""
    base = tmp_path_factory.mktemp("nvim-env")
    env = {
        "XDG_CONFIG_HOME": str(base / "config"),
        "XDG_DATA_HOME": str(base / "data"),
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_CACHE_HOME": str(base / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(base / "rplugin.vim"),
        "ACP_NVIM_TEST_PYTHON": sys.executable,
    }
    os.environ.update(env)
    return env


def start_nvim(workspace: Path) -> pynvim.Nvim:
    """An embedded headless Neovim with the plugin loaded, started in ``workspace`` the way a
    shell starts it (``PWD``, ``OLDPWD``, ``HOME``, ``SHELL``, ``TERM``, ``LANG``, ``USER``)."""
    instance = pynvim.attach("child", argv=shell_argv(workspace, [NVIM, "-u", INIT, "--embed", "--headless"]))
    instance.command(f"cd {workspace}")
    return instance


@pytest.fixture
def nvim(nvim_env: dict[str, str], tmp_path: Path) -> Iterator[pynvim.Nvim]:
    """A fresh embedded headless Neovim with the plugin loaded, cwd in a temp workspace."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    instance = start_nvim(workspace)
    instance.command("set columns=160 lines=50")
    try:
        yield instance
    finally:
        try:
            instance.command("silent! doautocmd VimLeavePre")
        except Exception:
            pass
        instance.close()


@pytest.fixture
def workspace(nvim: pynvim.Nvim) -> Path:
    return Path(nvim.funcs.getcwd())
