"""Highlights are defined in one place (lua/acp_nvim/kit/highlights.lua), every group the Lua code
uses is defined there, and :help acp_nvim-highlights documents exactly those groups."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]
LUA = ROOT / "lua" / "acp_nvim"
DOC = (ROOT / "doc" / "acp_nvim.txt").read_text()
NAME = re.compile(r"(?<![\w.])(?:vim\.fn\.)?AcpNvim[A-Z]\w*")


def doc_section(tag: str) -> str:
    """The text of the vimdoc section that starts at ``*tag*``, up to the next section rule or tag."""
    start = DOC.index(f"*{tag}*")
    end = re.compile(r"^(=+|.*\*acp_nvim-[\w-]+\*)$", re.MULTILINE).search(DOC, start + len(tag) + 2)
    return DOC[start:end.start() if end else len(DOC)]


def documented_groups() -> dict[str, str]:
    """group -> link, as listed in :help acp_nvim-highlights (a description may wrap)."""
    groups: dict[str, str] = {}
    current = None
    for line in doc_section("acp_nvim-highlights").splitlines():
        named = re.match(r"^  (AcpNvim\w+)\s", line)
        if named:
            current = named.group(1)
        link = re.search(r"\((\w+)\)$", line)
        if current and link and current not in groups:
            groups[current] = link.group(1)
    return groups


def used_groups() -> set[str]:
    """AcpNvim* names in the Lua code, without comments, the host's functions and User events."""
    events = set(re.findall(r"^  (AcpNvim\w+)", doc_section("acp_nvim-events"), re.MULTILINE))
    names: set[str] = set()
    for path in LUA.rglob("*.lua"):
        code = "\n".join(line.split("--", 1)[0] for line in path.read_text().splitlines())
        names |= {n for n in NAME.findall(code) if not n.startswith("vim.fn.")}
    host_functions = set(re.findall(r"^  (AcpNvim\w+) = '", (LUA / "host" / "init.lua").read_text(), re.MULTILINE))
    return names - (events - defined_in_lua()) - host_functions


def defined_in_lua() -> set[str]:
    text = (LUA / "kit" / "highlights.lua").read_text()
    return set(re.findall(r"^  (AcpNvim\w+) = '", text, re.MULTILINE))


def test_every_group_used_is_defined_in_highlights_lua():
    assert used_groups() - defined_in_lua() == set()


def test_groups_are_defined_nowhere_else():
    for path in LUA.rglob("*.lua"):
        if path.name != "highlights.lua":
            assert "nvim_set_hl" not in path.read_text(), f"{path} defines highlights"


def test_the_help_lists_every_group_with_its_link(nvim):
    defined = nvim.exec_lua("return require('acp_nvim.kit.highlights').groups")
    assert documented_groups() == defined
    assert set(defined) == defined_in_lua()


def test_every_group_is_linked_by_default_once_idle_after_startup_and_a_user_choice_stays(nvim):
    """Not at startup (nothing loads then): when Neovim is idle after it (the prestart, which runs
    even when it starts no host) or at the first :Ai, whichever comes first."""
    assert nvim.api.get_hl(0, {"name": "AcpNvimUser"}) == {}
    nvim.exec_lua("require('acp_nvim').setup({ prestart = false }); require('acp_nvim.host').prestart()")
    defined = nvim.exec_lua("return require('acp_nvim.kit.highlights').groups")
    for group, link in defined.items():
        hl = nvim.api.get_hl(0, {"name": group})
        assert hl.get("link") == link and hl.get("default") is True, group
    nvim.command("highlight AcpNvimReviewKey guifg=#ff0000")
    nvim.exec_lua("require('acp_nvim.kit.highlights').setup()")
    assert nvim.api.get_hl(0, {"name": "AcpNvimReviewKey"}).get("fg") == 0xFF0000
