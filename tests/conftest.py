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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Every run says where its time went: the 10 slowest tests and the time per folder (setup,
    call and teardown summed). A report, never a failure: a slow test is seen the day it lands."""
    spent: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            nodeid, duration = getattr(report, "nodeid", ""), getattr(report, "duration", None)
            if nodeid and isinstance(duration, float):
                spent[nodeid] = spent.get(nodeid, 0.0) + duration
    if not spent:
        return
    folders: dict[str, list[float]] = {}
    for nodeid, seconds in spent.items():
        folder = "/".join(nodeid.split("::")[0].split("/")[:2])
        folders.setdefault(folder, []).append(seconds)
    write = terminalreporter.write_line
    terminalreporter.section("where the time went")
    for nodeid, seconds in sorted(spent.items(), key=lambda item: -item[1])[:10]:
        write(f"{seconds:7.2f} s  {nodeid}")
    write("")
    for folder, times in sorted(folders.items(), key=lambda item: -sum(item[1])):
        write(f"{sum(times):7.1f} s  {len(times):5d} tests  {folder}")


@pytest.fixture(autouse=True)
def unit_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test under tests/unit starts no process (helpers/tier.py): ``make check`` needs no Neovim, no agent."""
    if UNIT in Path(request.node.path).parents:
        from helpers.tier import refuse_processes

        refuse_processes(monkeypatch)


@pytest.fixture(scope="session")
def test_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Python the plugin's host and the demo agent run on: the warm interpreter of this test
    process (tests/warm), or the real one with ``ACP_TEST_COLD=1``."""
    if os.environ.get("ACP_TEST_COLD"):
        yield sys.executable
        return
    import warm

    launcher, server = warm.start(tmp_path_factory.mktemp("warm"))
    try:
        yield str(launcher)
    finally:
        server.kill()
        server.wait()


@pytest.fixture(scope="session")
def nvim_env(tmp_path_factory: pytest.TempPathFactory, test_python: str) -> dict[str, str]:
    """Isolated XDG dirs (and rplugin manifest: nothing of another install leaks in)."""
    base = tmp_path_factory.mktemp("nvim-env")
    env = {
        "XDG_CONFIG_HOME": str(base / "config"),
        "XDG_DATA_HOME": str(base / "data"),
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_CACHE_HOME": str(base / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(base / "rplugin.vim"),
        "ACP_NVIM_TEST_PYTHON": test_python,
    }
    os.environ.update(env)
    return env


def start_nvim(workspace: Path, *, cold: bool = False) -> pynvim.Nvim:
    """An embedded headless Neovim with the plugin loaded, started in ``workspace`` the way a
    shell starts it (``PWD``, ``OLDPWD``, ``HOME``, ``SHELL``, ``TERM``, ``LANG``, ``USER``).
    ``cold``: its Python programs run on the real interpreter, not the warm one (``test_python``):
    for tests that look at those processes themselves (their parents, their memory maps)."""
    argv = [NVIM, "-u", INIT, "--embed", "--headless"]
    if cold:
        argv = [f"ACP_NVIM_TEST_PYTHON={sys.executable}", *argv]  # one more variable for `env`
    instance = pynvim.attach("child", argv=shell_argv(workspace, argv))
    instance.command(f"cd {workspace}")
    return instance


@pytest.fixture
def nvim(nvim_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[pynvim.Nvim]:
    """A fresh embedded headless Neovim with the plugin loaded, cwd in a temp workspace
    (``@pytest.mark.cold_python``: see ``start_nvim``)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    instance = start_nvim(workspace, cold=request.node.get_closest_marker("cold_python") is not None)
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
