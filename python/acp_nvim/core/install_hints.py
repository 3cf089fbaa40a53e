"""How to install an agent whose command is missing: the preset's install line, or ``:Ai install {id}``
when the ACP registry (the snapshot shipped with the plugin) knows the agent."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parents[3] / "data" / "acp_registry_snapshot.json"
"""The dated snapshot of the ACP registry in the plugin's folder (lua/acp_nvim/presets/registry.lua reads it too)."""

HINTS = SNAPSHOT.parent / "agent_install.json"
"""The install line of each preset's command, and names that differ from the registry id (Lua reads it too)."""


@cache
def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@cache
def registry_ids() -> frozenset[str]:
    """The ids of the shipped registry snapshot (empty when it cannot be read)."""
    agents = _read(SNAPSHOT).get("agents")
    return frozenset(a["id"] for a in agents if isinstance(a, dict) and isinstance(a.get("id"), str)) \
        if isinstance(agents, list) else frozenset()


def is_missing(command: str, env: Mapping[str, str]) -> bool:
    """Whether ``command`` names no program: not on the PATH of ``env``, or a path that is not there."""
    if os.sep in command:
        return not os.path.exists(command)
    return shutil.which(command, path=env.get("PATH")) is None


def install_line(name: str, command: str) -> str:
    """"install it: {line}" for agent ``name`` run as ``command``; '' when nothing is known."""
    base = os.path.basename(command)
    hints = _read(HINTS)
    lines, renamed = hints.get("lines") or {}, hints.get("registry_ids") or {}
    ways = [lines[base]] if isinstance(lines.get(base), str) else []
    ids = registry_ids()
    for candidate in (name, base):
        registry_id = renamed.get(candidate, candidate)
        if registry_id in ids:
            ways.append(f":Ai install {registry_id}")
            break
    return f"install it: {' or '.join(ways)}" if ways else ""
