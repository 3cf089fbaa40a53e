"""``scripts/demo.py`` as a module, for the tests that start Neovim exactly as ``make demo`` does."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"


def demo_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("acp_nvim_demo_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
