"""The e2e tests that drive the core without Neovim use tests/unit's recording port (``fake_editor``)."""

from __future__ import annotations

import sys
from pathlib import Path

UNIT = str(Path(__file__).resolve().parents[1] / "unit")
if UNIT not in sys.path:
    sys.path.append(UNIT)
