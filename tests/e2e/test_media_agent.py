"""An image in a prompt reaches the demo agent as an image block (tests/unit/test_media.py holds the rest)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

from acp_nvim.core.config import PACKAGE_ROOT
from acp_nvim.core.prompting import attachments
from acp_nvim.core.session.session import Prompt
from helpers import async_wait_for, core
from media_samples import png

pytestmark = pytest.mark.timeout(30)


async def test_the_image_reaches_the_agent_as_an_image_block(tmp_path: Path):
    (tmp_path / "shot.png").write_bytes(png())
    agent = {"command": sys.executable, "args": ["-m", "acp_nvim.demo_agent"],
             "env": {"PYTHONPATH": str(PACKAGE_ROOT), "ACP_DEMO_CAPABILITIES": "image"}}
    _, _, session = await core.started(tmp_path, {"agents": {"d": agent}, "default_agent": "d"})
    try:
        session.submit(Prompt("echo", attachments=attachments.mentions("echo @shot.png", str(tmp_path))))
        text = lambda: "\n".join(b.text() for b in session.transcript.blocks)  # noqa: E731
        await async_wait_for(lambda: "turn ended" in text())
        assert f"— attached: shot.png (image, {len(png())} B)" in text()
        assert '"type": "image"' in text() and base64.b64encode(png()).decode() in text()
    finally:
        await session.close()
