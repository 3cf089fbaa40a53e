"""Fixtures for the real-agent end-to-end tests: the scripted model server, private agent homes."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import WaitTimeout, wait_for

from .agents import ROOT, prepare, processes_with_home, unavailable
from .driver import AgentDriver
from .model_server import ModelServer

# Agent homes live outside /tmp on purpose: Codex's sandbox (bubblewrap) mounts its own /tmp,
# which hides the helper executables Codex links under $CODEX_HOME.
HOMES = ROOT / ".cache" / "real-agent-homes"
if Path(tempfile.gettempdir()).resolve() in HOMES.resolve().parents:
    HOMES = Path.home() / ".cache" / "acp-nvim-real-agent-homes"


@pytest.fixture(scope="session")
def model_server() -> Iterator[ModelServer]:
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _agent_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs before the ``nvim`` fixture: the agent inherits Neovim's environment."""
    # This machine sets IS_SANDBOX=yes; claude-agent-acp then fails session/new (tests/real_agents/README.md).
    monkeypatch.delenv("IS_SANDBOX", raising=False)


@pytest.fixture
def agent_home() -> Iterator[Path]:
    HOMES.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=HOMES))
    try:
        yield home
    finally:
        with contextlib.suppress(WaitTimeout):  # agents may still write their HOME while they exit
            wait_for(lambda: not processes_with_home(home), timeout=10, interval=0.05, what="the agent to exit")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def setup_extra() -> dict[str, Any]:
    """More ``setup()`` options for the agent (a test overrides it: ``mcp_servers``, ...)."""
    return {}


@pytest.fixture
def agent_env() -> dict[str, str]:
    """More environment for the agent (a test overrides it: ``CLAUDE_CODE_MAX_RETRIES``, ...)."""
    return {}


@pytest.fixture
def agent(request: pytest.FixtureRequest, model_server: ModelServer, agent_home: Path,
          setup_extra: dict[str, Any], agent_env: dict[str, str]) -> AgentDriver:
    """The real agent named by the test's (indirect) parameter, started through its preset."""
    reason = unavailable(request.param)
    if reason:
        pytest.skip(f"real agent {request.param!r} unavailable: {reason}")
    nvim = request.getfixturevalue("nvim")
    setup = prepare(request.param, model_server.url, agent_home)
    setup.extra = setup_extra
    setup.env.update(agent_env)
    driver = AgentDriver(nvim, setup, model_server, request.getfixturevalue("workspace"))
    driver.start()
    return driver
