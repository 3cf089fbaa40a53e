"""Bundled offline demo ACP agent (``python -m acp_nvim.demo_agent``).

The first word of a prompt picks a scenario from :data:`SCENARIOS`; anything else runs the
default markdown reply. Used for demos and as the workhorse of the test suite.
"""

from __future__ import annotations

from .agent import DemoAgent
from .scenarios import SCENARIOS

__all__ = ["SCENARIOS", "DemoAgent"]
