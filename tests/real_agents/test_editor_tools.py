"""The real agents and what the editor gives them: its MCP server (``nvim``) and images in prompts.

- The scripted model calls the editor's ``diagnostics`` tool through the agent's own MCP client and
  must get the diagnostic of a buffer that is not saved (it exists only in Neovim).
- A configured stdio MCP server (``probe_mcp.py``) is started by each agent with its env, and the
  scripted model calls its tool.
- An ``@shot.png`` mention must reach the scripted model as an image in the agent's wire format:
  Anthropic ``image`` (base64 source), OpenAI ``image_url`` / ``input_image`` (data URL), Gemini
  ``inlineData``; the model reports the bytes' hash.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from media_samples import png

from . import probe_mcp
from .driver import AgentDriver
from .test_real_agents import ALL, agents

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]

IMAGE_SHAPES = {"claude": "anthropic_image", "opencode": "image_url", "codex": "input_image",
                "codex_legacy": "input_image", "gemini": "inlineData"}
DIAGNOSTIC = "undefined-name-zeta"


def until_verdict(agent: AgentDriver, words: tuple[str, ...], accept: bool = True) -> str:
    """Wait for one of ``words`` in the chat, accepting every permission request on the way."""
    def progress() -> str | None:
        chat = agent.chat()
        found = next((w for w in words if w in chat), None)
        if found:
            return found
        for request in agent.pending_requests():
            agent.answer(request, "accept" if accept else "reject")
        return None
    return agent.wait(progress, f"one of {words} in the chat")


@agents(ALL)
def test_the_model_gets_the_diagnostic_of_an_unsaved_buffer(agent: AgentDriver) -> None:
    path = agent.workspace / "code.py"
    path.write_text("x = 1\n")
    buf = agent.open_file(path)
    agent.nvim.api.buf_set_lines(buf, 1, 1, False, ["y = zeta + 1  # typed, not saved"])
    agent.nvim.exec_lua("""
        local buf, message = ...
        vim.diagnostic.set(vim.api.nvim_create_namespace('fake-linter'), buf, {
          { lnum = 1, col = 4, message = message, severity = vim.diagnostic.severity.ERROR, source = 'fake-linter' },
        })""", buf, DIAGNOSTIC)
    with agent.step("editor MCP: the agent got the editor's server"):
        sent = [m for m in agent.wire_messages(agent.workspace.parent / "wire-new.jsonl")
                if m.get("method") == "session/new" and m["_direction"] == "out"]
        servers = sent[0]["params"]["mcpServers"]
        agent.check([s["name"] for s in servers] == ["nvim"] and servers[0]["type"] == "http",
                    f"mcpServers sent: {servers}")
    with agent.step("editor MCP: the model calls diagnostics and reads the unsaved buffer's"):
        before = agent.send(f"[scenario=editor_diagnostics file={path} expect={DIAGNOSTIC}] check the file")
        verdict = until_verdict(agent, (f"diagnostics-ok {DIAGNOSTIC}", "diagnostics-missing", "scripted model:"))
        agent.check(verdict == f"diagnostics-ok {DIAGNOSTIC}", f"the model's verdict: {verdict!r}")
        agent.wait_turn_end(before)
    with agent.step("editor MCP: the call is in the session log"):
        entries = agent.log_entries(agent.workspace.parent / "wire-mcp.jsonl")
        calls = [e for e in entries if e.get("kind") == "mcp"]
        agent.check(len(calls) >= 1 and calls[0]["summary"].startswith("tool nvim/diagnostics("),
                    f"mcp log entries: {calls}")
        agent.check(agent.nvim.api.buf_get_option(buf, "modified"), "the buffer was saved behind the user's back")


@agents(ALL)
def test_an_image_reaches_the_model(agent: AgentDriver) -> None:
    image = png(5, 4, b"\x10\x80\xf0")
    (agent.workspace / "shot.png").write_bytes(image)
    digest = hashlib.sha256(image).hexdigest()[:12]
    with agent.step("image: the @mention is attached with its size"):
        before = agent.send("[scenario=image] what is in @shot.png")
        agent.wait_chat(f"— attached: shot.png (image, {len(image)} B)")
    with agent.step("image: the scripted model sees the image in the agent's wire format"):
        agent.wait_turn_end(before)
        seen = re.search(r"image-seen (.*)", agent.chat())
        agent.check(seen is not None, "the model saw no image")
        expected = f"{IMAGE_SHAPES[agent.name]} image/png sha={digest}"
        agent.check(expected in seen.group(1), f"the model saw {seen.group(1)!r}, expected {expected!r}")
    with agent.step("image: it went as an ACP image block"):
        prompts = [m for m in agent.wire_messages(agent.workspace.parent / "wire-image.jsonl")
                   if m.get("method") == "session/prompt" and m["_direction"] == "out"]
        blocks = prompts[-1]["params"]["prompt"]
        images = [b for b in blocks if b["type"] == "image"]
        agent.check(len(images) == 1 and images[0]["mimeType"] == "image/png", json.dumps(blocks)[:500])


PROBE = {"mcp_servers": {"probe": {"command": sys.executable, "args": [str(Path(__file__).with_name("probe_mcp.py"))],
                                   "env": {"PROBE_TOKEN": probe_mcp.EXPECTED}}}}


@agents(ALL)
@pytest.mark.parametrize("setup_extra", [PROBE])
def test_a_configured_stdio_server_reaches_the_model(agent: AgentDriver) -> None:
    with agent.step("stdio MCP: the agent got the configured server with its env"):
        sent = [m for m in agent.wire_messages(agent.workspace.parent / "wire-probe.jsonl")
                if m.get("method") == "session/new" and m["_direction"] == "out"]
        servers = {s["name"]: s for s in sent[0]["params"]["mcpServers"]}
        agent.check(set(servers) == {"probe", "nvim"}, f"mcpServers sent: {sorted(servers)}")
        agent.check([e["name"] for e in servers["probe"]["env"]] == ["PROBE_TOKEN"], f"env: {servers['probe']}")
        agent.check(probe_mcp.EXPECTED not in json.dumps(sent), "the env value is in the log")
    with agent.step("stdio MCP: the model calls the server's tool, which got its env"):
        before = agent.send("[scenario=mcp_probe] ask the probe")
        verdict = until_verdict(agent, ("probe-ok", "probe-missing", "scripted model:"))
        agent.check(verdict == "probe-ok", f"the model's verdict: {verdict!r}")
        agent.wait_turn_end(before)
