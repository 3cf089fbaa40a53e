"""`:help acp_nvim-permissions` states the gate's guarantee and names the attack tests that hold it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "doc" / "acp_nvim.txt").read_text(encoding="utf-8")


def section(tag: str) -> str:
    start = DOC.index(f"*{tag}*")
    following = re.search(r"\n[A-Z][A-Z' ]+ {2,}\*acp_nvim-", DOC[start:])
    return DOC[start:start + following.start()] if following else DOC[start:]


def test_the_guarantee_paragraph_names_each_promise_and_each_test_that_attacks_it():
    text = " ".join(section("acp_nvim-permissions").split())
    for promise in ("exactly what you saw and accepted", "the text is the one you accepted",
                    "opens a review of its own", "reviewed under every policy and rule",
                    "its argv, its folder", "its environment", "covers nothing and is asked again",
                    "no more than the request you answered", "nothing outside the workspace roots"):
        assert promise in text, promise
    named = re.findall(r"tests/security/\w+\.py", text)
    assert len(named) == 5 and all((ROOT / name).is_file() for name in named), named
