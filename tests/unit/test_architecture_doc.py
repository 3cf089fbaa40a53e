"""ARCHITECTURE.md stays true: the files it names exist, its rank list is the one the layer test
enforces, and its figures are the code's."""

from __future__ import annotations

import re
from pathlib import Path

from test_layers import RANKS, SHIM_NAME

from acp_nvim.nvim.chat.render_queue import FLUSH_DELAY

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "python" / "acp_nvim"


def _doc_path(module: str) -> str:
    """How the doc names a module: ``core/files/`` for a package, ``core/port.py`` for a module."""
    relative = module.removeprefix("acp_nvim.").replace(".", "/")
    return f"{relative}/" if (PACKAGE / relative).is_dir() else f"{relative}.py"


def test_every_file_it_names_exists():
    named = set(re.findall(r"`((?:core|nvim)/[\w/]+\.py|lua/acp_nvim/\w+\.lua|tests/[\w/]+\.py)`", DOC))
    missing = [name for name in sorted(named)
               if not (PACKAGE / name).exists() and not (ROOT / name).exists()]
    assert named and missing == []


def test_the_rank_list_is_the_enforced_one():
    section = DOC[DOC.index("### Ranks"):DOC.index("## Decisions")]
    items = re.findall(r"^\d+\. (.+)$", section, flags=re.MULTILINE)
    expected = [[_doc_path(m) for m in group if m not in ("acp_nvim", "acp_nvim.core")] for group in RANKS]
    assert len(items) == len(RANKS)
    for item, names in zip(items, expected, strict=True):
        named = re.findall(r"`([^`]+)`", item)
        assert named[: len(names)] == names if names == [_doc_path(SHIM_NAME)] else named == names, item


def test_figures_and_references():
    assert f"{FLUSH_DELAY * 1000:g} ms" in DOC
    assert "GUIDE.md" not in DOC
