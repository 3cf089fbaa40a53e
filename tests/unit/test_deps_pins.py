""":Ai deps installs what pyproject.toml pins (lua/acp_nvim/host/deps.lua keeps its own copy: it runs
before any Python does)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPS = (ROOT / "lua" / "acp_nvim" / "host" / "deps.lua").read_text("utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]


def lua_list(name: str) -> list[str]:
    body = re.search(rf"^M\.{name} = \{{(.*?)\}}$", DEPS, flags=re.MULTILINE)
    assert body, f"M.{name} not found in deps.lua"
    return re.findall(r"'([^']+)'", body.group(1))


def test_the_required_packages_are_the_runtime_dependencies():
    assert lua_list("REQUIRED") == PROJECT["dependencies"]


def test_the_optional_packages_are_the_fast_and_remote_extras():
    extras = PROJECT["optional-dependencies"]
    assert lua_list("OPTIONAL") == [*extras["fast"], *extras["remote"]]


def test_the_oldest_python_is_the_projects():
    major, minor = re.search(r"M\.MIN_PYTHON = \{ (\d+), (\d+) \}", DEPS).groups()
    assert PROJECT["requires-python"] == f">={major}.{minor}"
