"""claude-agent-acp speaks the current protocol to acp.nvim: a message id on every chunk (a new block per
model message, kept by :Ai export), and a subagent (its Agent/Task tool) run as a child session, since
acp.nvim advertises ``clientCapabilities.subagents``: announced by ``subagent_update``, its calls under its
own session id, drawn folded under the call that stands for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import chat_blocks

from .driver import AgentDriver
from .test_real_agents import agents

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]



def updates(agent: AgentDriver, export: Path) -> list[dict]:
    return [m["params"]["update"] for m in agent.wire_messages(export)
            if m.get("method") == "session/update" and m.get("_direction") == "in"]


@agents(["claude"])
def test_message_ids_and_a_subagents_calls_under_its_call(agent: AgentDriver, tmp_path: Path) -> None:
    target = agent.workspace / "target.txt"
    target.write_text("the subagent reads this\n")
    with agent.step("a Task call runs a subagent that reads the file; the parent's answer follows"):
        agent.nvim.command("Ai log level trace")  # the log keeps the streamed chunks too
        before = agent.send(f"[scenario=subagent file={target}] delegate the reading")
        agent.wait_chat("subagent-ok")
        agent.wait_turn_end(before)
    params = [m["params"] for m in agent.wire_messages(tmp_path / "log.jsonl")
              if m.get("method") == "session/update" and m.get("_direction") == "in"]
    seen = [p["update"] for p in params]
    with agent.step("on the wire: every chunk has a messageId, the subagent is a child session"):
        chunks = [u for u in seen if u["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")]
        agent.check(bool(chunks) and all(isinstance(u.get("messageId"), str) for u in chunks),
                    f"chunks without a messageId: {[u for u in chunks if 'messageId' not in u][:3]}")
        announces = [u for u in seen if u["sessionUpdate"] == "subagent_update"]
        agent.check(bool(announces) and announces[0].get("capabilities") == {"cancel": {}},
                    f"the child's announce: {announces[:1]}")
        child = announces[0]["sessionId"]
        child_calls = [p["update"] for p in params if p["sessionId"] == child
                       and p["update"]["sessionUpdate"] == "tool_call"]
        agent.check(len(child_calls) == 1, f"the child's calls: {child_calls}")
        root = {p["sessionId"] for p in params} - {child}
        agent.check(len(root) == 1, f"the sessions: {root} and the child {child}")
    with agent.step("in the chat: one tool block for the child, its Read folded under it"):
        blocks = chat_blocks(agent.nvim, "claude/1")
        tools = [b["text"] for b in blocks if b["kind"] == "tool"]
        agent.check(len(tools) == 1, f"tool blocks: {tools}")
        agent.check(tools[0].startswith("● think · subagent “"), f"the child's call: {tools[0]}")
        agent.check("  ▸ subagent · 1 tool call: 1 done" in tools[0], f"the fold: {tools[0]}")
        texts = [b["text"] for b in blocks if b["kind"] == "agent"]
        agent.check(not any("sub-read-done" in text for text in texts), f"the subagent's text in the answer: {texts}")
        chunks = [p["update"] for p in params if p["sessionId"] in root
                  and p["update"]["sessionUpdate"] in ("agent_message_chunk", "agent_thought_chunk")]
    with agent.step(":Ai export keeps each model message's id"):
        export = tmp_path / "chat.md"
        agent.nvim.command(f"Ai export {export}")
        text = agent.wait(lambda: export.exists() and export.read_text(), "the export")
        ids = {u["messageId"] for u in chunks}
        agent.check(all(f"<!-- message-id: {message_id} -->" in text for message_id in ids),
                    f"the export lacks some of {ids}:\n{text}")
        agent.check(text.count("<!-- message-id: ") >= 2, "one id per model message (Delegating, then the answer)")


BROKEN_MCP = {"mcp_servers": {"broken": {"command": "/nonexistent/acp-nvim-no-such-mcp-server"}}}


@agents(["claude"])
@pytest.mark.parametrize("setup_extra", [BROKEN_MCP])
def test_a_notice_and_a_compaction(agent: AgentDriver, tmp_path: Path) -> None:
    """acp.nvim advertises ``session.notices`` and ``session.compaction``: claude sends a ``notice`` for a
    configured MCP server that cannot start, and ``compaction_update`` for /compact."""
    with agent.step("an MCP server that cannot start: the notice, marked as a warning"):
        before = agent.send("[scenario=text] say something")
        agent.wait_chat('⚠ MCP server "broken" failed to start\n  Its tools are unavailable in this session.')
        agent.wait_turn_end(before)
    with agent.step("/compact: one folded line; <CR> shows the summary the model wrote"):
        before = agent.send("/compact")
        agent.wait_chat("▸ conversation compacted · summary: 1 line")
        agent.wait_turn_end(before)
        agent.nvim.command(f"call win_gotoid(bufwinid('{agent.chat_name}'))")
        lines = agent.nvim.api.buf_get_lines(0, 0, -1, False)
        agent.nvim.api.win_set_cursor(0, [lines.index("▸ conversation compacted · summary: 1 line") + 1, 0])
        agent.nvim.input("<CR>")
        agent.wait_chat("▾ conversation compacted · summary: 1 line\n  │ Streamed reply: alpha beta gamma delta")
