"""``:Ai login`` with every pinned real agent: the picker lists the methods the agent sent in its
``initialize`` answer (agent methods and ``terminal`` ones, as ACP's schema now has them), and
codex-acp's own "API Key" method logs the running session in with ``authenticate``."""

from __future__ import annotations

from pathlib import Path

import pytest

from .agents import prepare, unavailable
from .driver import AgentDriver
from .model_server import ModelServer
from .test_real_agents import ALL, agents

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]

PICKER = """
_G.offered = {}
_G.pick = ...
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.offered, items)
  for i, item in ipairs(items) do
    if _G.pick and item:find(_G.pick, 1, true) then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
"""


def sent_methods(agent: AgentDriver) -> list[str]:
    """The names of the ``authMethods`` of the agent's ``initialize`` answer, as it sent them."""
    answers = [m for m in agent.wire_messages(agent.workspace.parent / "wire-init.jsonl")
               if m.get("_method") == "initialize" and "result" in m]
    return [m["name"] for m in answers[0]["result"].get("authMethods") or []]


@agents(ALL)
def test_login_lists_the_agents_methods(agent: AgentDriver) -> None:
    names = sent_methods(agent)
    with agent.step("login: :Ai login offers every method the agent sent"):
        agent.nvim.exec_lua(PICKER, None)
        agent.nvim.command("Ai login")
        if not names:
            agent.wait(lambda: any("offers no login method" in n for n in agent.notes()), "the no-method message")
            return
        offered = agent.wait(lambda: agent.nvim.exec_lua("return _G.offered[1]"), "the login picker")
        # An item is the method's name, then its description in parentheses when it sent one;
        # names may hold parentheses themselves ("ChatGPT (device code)").
        agent.check(len(offered) == len(names)
                    and all(item == name or item.startswith(f"{name} (")
                            for item, name in zip(offered, names, strict=True)),
                    f"offered {offered}, sent {names}")
    with agent.step("login: dismissing the picker leaves the session as it was"):
        agent.wait_turn_end(agent.send("[scenario=text] say something"))


@pytest.fixture
def codex_with_key(request: pytest.FixtureRequest, model_server: ModelServer, agent_home: Path) -> AgentDriver:
    reason = unavailable("codex")
    if reason:
        pytest.skip(f"real agent 'codex' unavailable: {reason}")
    setup = prepare("codex", model_server.url, agent_home)
    setup.env["CODEX_API_KEY"] = "sk-scripted-codex"
    driver = AgentDriver(request.getfixturevalue("nvim"), setup, model_server, request.getfixturevalue("workspace"))
    driver.start()
    return driver


def test_codex_api_key_login_authenticates_the_running_session(codex_with_key: AgentDriver) -> None:
    agent = codex_with_key
    with agent.step("login: API Key, with CODEX_API_KEY in the agent's env, authenticates"):
        agent.nvim.exec_lua(PICKER, "API Key")
        agent.nvim.command("Ai login")
        agent.wait(lambda: any("codex: logged in with API Key" in n for n in agent.notes())
                   or any("login with API Key failed" in n for n in agent.notes()), "the login's outcome")
        agent.check(any("codex: logged in with API Key" in n for n in agent.notes()), f"notes: {agent.notes()}")
        requests = [m for m in agent.wire_messages(agent.workspace.parent / "wire-auth.jsonl")
                    if m.get("method") == "authenticate" and m["_direction"] == "out"]
        agent.check([m["params"]["methodId"] for m in requests] == ["api-key"], f"authenticate requests {requests}")
    with agent.step("login: the session still answers"):
        agent.wait_turn_end(agent.send("[scenario=text] say something"))
