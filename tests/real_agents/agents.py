"""Per-agent test setup: a private HOME, config files that point at the scripted model server.

The agent itself is launched exactly as the shipped preset says (``lua/acp_nvim/presets/init.lua``):
the tests only add the model endpoint, HOME and the test install's ``node_modules/.bin`` to PATH.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = Path(os.environ.get("ACP_NVIM_TEST_AGENTS", ROOT / ".cache" / "agents"))
MODULES = AGENTS_DIR / "node_modules"
BIN_DIR = MODULES / ".bin"
NAMES = ("claude", "codex", "codex_legacy", "gemini", "opencode")
EXECUTABLES = {
    "claude": BIN_DIR / "claude-agent-acp",
    # Both Codex adapters claim `.bin/codex-acp`: each runs by its own path.
    "codex": MODULES / "@agentclientprotocol" / "codex-acp" / "dist" / "index.js",
    "codex_legacy": MODULES / "@zed-industries" / "codex-acp" / "bin" / "codex-acp.js",
    "gemini": BIN_DIR / "gemini",
    "opencode": BIN_DIR / "opencode",
}
LAUNCH = {
    "codex": "require('acp_nvim.presets').codex({{ command = 'node', args = {{ {path} }}, "
             "env = vim.json.decode(env_json) }})",
    # the archived adapter, as the codex preset launched it: its mode that asks is read-only too
    "codex_legacy": "{{ command = {path}, mode = 'read-only', env = vim.json.decode(env_json), "
                    "box = {{ state = {{ '$CODEX_HOME' }} }} }}",
}
"""Agents not launched as ``presets.<name>()`` alone: a Lua expression, ``{path}`` its executable."""


@dataclass(slots=True)
class AgentSetup:
    """What a test needs to start one real agent through its preset."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    agent_lua: str = ""  # a Lua expression for the agent table; default: the preset of ``name``
    extra: dict[str, Any] = field(default_factory=dict)
    """More ``setup()`` options (``mcp_servers``, ...), merged over the agent's."""

    def setup_lua(self) -> str:
        """The ``setup()`` call a user would write, plus the test env (endpoint, HOME, PATH).
        Its arguments: the env and ``extra``, as JSON."""
        agent = self.agent_lua or f"require('acp_nvim.presets').{self.name}({{ env = vim.json.decode(env_json) }})"
        boxed = ("p.box = vim.tbl_extend('force', p.box or {}, { enabled = true })\n"
                 if self.name in BOXED else "")
        return (f"local env_json, extra_json = ...\nlocal p = {agent}\n{boxed}"
                f"require('acp_nvim').setup(vim.tbl_deep_extend('force', {{ agents = {{ {self.name} = p }}, "
                f"default_agent = '{self.name}' }}, vim.json.decode(extra_json)))")


BOXED: tuple[str, ...] = ()
"""The agents these tests run in the box (|acp_nvim-box|), their test HOME's state folders shown; the
box is opt-in, so none by default (``ACP_NVIM_BOX=on`` runs every agent boxed). Boxed, claude, gemini,
codex and opencode pass test_editor_tools.py (stdio MCP servers), test_real_questions.py and
test_real_warm.py; the whole folder has not run boxed yet."""

SDK_EXAMPLE = AGENTS_DIR / "node_modules" / "@agentclientprotocol" / "sdk" / "dist" / "examples" / "agent.js"


def sdk_example() -> AgentSetup:
    """The ACP TypeScript SDK's example agent: a fixed script, no model, no files."""
    return AgentSetup("sdk_example", {}, f"{{ command = 'node', args = {{ {json.dumps(str(SDK_EXAMPLE))} }} }}")


def unavailable(name: str) -> str | None:
    """Why agent ``name`` cannot run here (the reason a test skips with), or None."""
    if not EXECUTABLES[name].exists():
        return (f"{EXECUTABLES[name].relative_to(MODULES)} is not installed in {MODULES}: run `make agents` "
                "(npm ci of tests/agents/package-lock.json; needs npm and the npm registry)")
    if name.startswith("codex") and shutil.which("bwrap") is None:
        return "Codex's sandbox needs bubblewrap (bwrap): `apt-get install bubblewrap` (done by `make agents` as root)"
    return None


def processes_with_home(home: str | Path) -> list[int]:
    """Pids of the live processes whose environment has ``HOME=home`` (an agent and its children)."""
    marker = f"HOME={home}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker in (proc / "environ").read_bytes().split(b"\0"):
                if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


def prepare(name: str, base_url: str, home: Path) -> AgentSetup:
    """Write ``name``'s private config under ``home`` and return its launch environment."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PATH": f"{BIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.update(_SETUPS[name](base_url, home))
    launch = LAUNCH.get(name, "").format(path=json.dumps(str(EXECUTABLES[name])))
    return AgentSetup(name, env, launch)


def _claude(base_url: str, home: Path) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted",
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # Offline (no feature flags fetched) Claude Code offers no task tools, so it sends no plan.
        "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",
        # Deferred tools need the first-party API's tool search; a local server has none.
        "ENABLE_TOOL_SEARCH": "false",
    }


def _opencode(base_url: str, home: Path) -> dict[str, str]:
    config = {
        "model": "mock/m", "small_model": "mock/m", "autoupdate": False, "share": "disabled",
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": f"{base_url}/v1", "apiKey": "x"},
            # a model that takes images, as the real ones do (else opencode drops them with an error text)
            "models": {"m": {"tool_call": True, "attachment": True, "limit": {"context": 100000, "output": 4096},
                             "modalities": {"input": ["text", "image"], "output": ["text"]}}},
        }},
    }
    path = home / "opencode.json"
    path.write_text(json.dumps(config))
    return {
        "OPENCODE_CONFIG": str(path),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    }


def _codex(base_url: str, home: Path, model: str = "gpt-5.5") -> dict[str, str]:
    """Codex's provider block. The model must be in Codex's own catalog: an unknown one loses
    ``apply_patch`` (Codex 0.166 knows ``gpt-5.5``; the legacy adapter's Codex ``gpt-5.3-codex``)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "mock"\n'
        "[model_providers.mock]\n"
        'name = "mock"\n'
        f'base_url = "{base_url}/v1"\n'
        'env_key = "MOCK_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    return {"CODEX_HOME": str(codex_home), "MOCK_API_KEY": "x"}


def _gemini(base_url: str, home: Path) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "model": {"name": "gemini-2.5-flash"},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True},
    }
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return {
        "GEMINI_API_KEY": "x",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_TELEMETRY_ENABLED": "false",
    }


def _codex_legacy(base_url: str, home: Path) -> dict[str, str]:
    return _codex(base_url, home, model="gpt-5.3-codex")


_SETUPS = {"claude": _claude, "opencode": _opencode, "codex": _codex, "codex_legacy": _codex_legacy,
           "gemini": _gemini}
