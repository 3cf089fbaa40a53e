"""The :Ai subcommand registry without a process: the files made from it are current (the drift
check of ``make check``), malformed entries are refused, handlers reach the app only through the
context. Its behaviour in a real Neovim is in tests/nvim/test_subcommands.py."""

from __future__ import annotations

import re

import pytest

from acp_nvim.nvim.commands import subcommand_docs
from acp_nvim.nvim.commands.subcommands import Arg, Subcommand
from conftest import ROOT


def test_generated_files_match_the_registry():
    stale = [str(path.relative_to(subcommand_docs.ROOT)) for path in subcommand_docs.stale()]
    assert stale == [], f"run `make docs`: {stale} differ from python/acp_nvim/nvim/subcommands.py"


@pytest.mark.parametrize("bad", [
    lambda: Arg(sources=("nosuch",)),
    lambda: Arg(words=("a",), then={"b": ()}),
    lambda: Subcommand("x", ("",), "neither"),
])
def test_registry_rejects_malformed_entries(bad):
    with pytest.raises(ValueError):
        bad()


def test_handlers_reach_the_app_only_through_the_context():
    """No module of the Neovim layer but app.py imports App or touches an App private."""
    nvim_layer = ROOT / "python" / "acp_nvim" / "nvim"
    offenders = [path.name for path in nvim_layer.glob("*.py") if path.name != "app.py"
                 and re.search(r"from \.app import|\bapp\._|_app\.", path.read_text())]
    assert offenders == []
