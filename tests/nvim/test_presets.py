"""Presets (lua/acp_nvim/presets/init.lua): the agent tables they build, in real Neovim."""

from __future__ import annotations

import pytest
from pynvim.api.common import NvimError


def build(nvim, name: str, opts: dict | None = None) -> dict:
    return nvim.exec_lua("return require('acp_nvim.presets').build(...)", name, opts or {})


def test_every_preset_builds_a_valid_agent_for_setup(nvim):
    names = nvim.exec_lua("return require('acp_nvim.presets').names")
    assert {"claude", "codex", "gemini", "opencode", "goose", "qwen", "kimi", "copilot"} <= set(names)
    nvim.exec_lua("""
      local presets = require('acp_nvim.presets')
      local agents = {}
      for _, name in ipairs(presets.names) do agents[name] = presets[name]() end
      require('acp_nvim').setup({ agents = agents, default_agent = 'claude' })
    """)
    assert nvim.exec_lua("return require('acp_nvim').config.agents.gemini.args") == ["--acp"]


@pytest.mark.parametrize(("name", "policy", "mode"), [
    ("claude", "ask", "default"), ("claude", "auto-edit", "acceptEdits"), ("claude", "trust", "bypassPermissions"),
    ("codex", "ask", "read-only"), ("codex", "auto-edit", "workspace-write"), ("codex", "trust", "agent-full-access"),
    ("gemini", "ask", "default"), ("gemini", "auto-edit", "autoEdit"), ("gemini", "trust", "yolo"),
])
def test_policy_selects_the_agent_mode(nvim, name, policy, mode):
    assert build(nvim, name, {"policy": policy})["mode"] == mode


def test_ask_is_the_default_policy(nvim):
    assert build(nvim, "claude")["mode"] == "default"
    assert '"edit":"ask"' in build(nvim, "opencode")["env"]["OPENCODE_PERMISSION"]
    assert '"bash":"allow"' in build(nvim, "opencode", {"policy": "trust"})["env"]["OPENCODE_PERMISSION"]


def test_options_extend_the_preset(nvim):
    agent = build(nvim, "opencode", {"command": "/opt/oc", "args": ["--print-logs"], "env": {"A": "1"}, "cwd": "/w"})
    assert agent["command"] == "/opt/oc"
    assert agent["args"] == ["acp", "--print-logs"]
    assert agent["env"]["A"] == "1" and "OPENCODE_PERMISSION" in agent["env"]
    assert agent["cwd"] == "/w"
    assert build(nvim, "opencode")["args"] == ["acp"], "a preset is a fresh table every time"


@pytest.mark.parametrize(("name", "opts", "message"), [
    ("nope", {}, 'no preset "nope"'),
    ("claude", {"policy": "yolo"}, "policy: expected 'ask', 'auto-edit' or 'trust'"),
    ("claude", {"modes": "x"}, 'unknown option "modes"'),
])
def test_bad_input_is_a_clear_error(nvim, name, opts, message):
    with pytest.raises(NvimError, match=message):
        build(nvim, name, opts)
