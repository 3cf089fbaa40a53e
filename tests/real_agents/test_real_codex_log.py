"""The maintained Codex adapter (codex-acp 2.6): ``:Ai log`` shows the session from ``initialize`` on, and
which MCP servers acp.nvim passed (the editor's own, over HTTP)."""

from __future__ import annotations

import pytest

from helpers import buffer_text

from .driver import AgentDriver

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(240)]


@pytest.mark.parametrize("agent", ["codex"], indirect=True)
def test_the_log_shows_the_session_from_initialize_on(agent: AgentDriver) -> None:
    with agent.step("codex log: one turn"):
        agent.wait_turn_end(agent.send("[scenario=text] hello"), timeout=90)
    with agent.step("codex log: :Ai log holds the initialize exchange"):
        agent.nvim.command("Ai log")
        log = agent.wait(lambda: (text := buffer_text(agent.nvim, "acp://log/codex/1")) and "session/prompt" in text
                         and "request initialize" in text and text, "the log buffer from initialize on")
        heads = [line for line in log.splitlines() if line[:1].isdigit()]
        agent.check("lifecycle: spawned pid" in heads[0] and heads[1].endswith("→ request initialize #0")
                    and "← response initialize #0" in heads[2] and "codex-acp 2.6" in heads[2],
                    f"the log does not start with the spawn and the initialize exchange: {heads[:3]}")
        passed = [line for line in heads if "lifecycle: mcpServers passed to the agent:" in line]
        agent.check(bool(passed) and passed[0].endswith(": nvim (http)"),
                    f"the log does not say which MCP servers went: {passed}")
