"""An agent's children are ended with it, even when its launcher dies first."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from acp_nvim.core.agent import process_tree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


async def test_reap_ends_the_children_a_dead_launcher_left_behind() -> None:
    launcher = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"])
    try:
        tree = []
        for _ in range(100):
            tree = process_tree.descendants(launcher.pid)
            if len(tree) == 2:
                break
            await asyncio.sleep(0.02)
        assert len(tree) == 2, tree
        launcher.kill()
        launcher.wait()
        assert process_tree.signal_all(tree, 0) == tree, "the children outlive their launcher"
        await process_tree.reap(tree)
        assert process_tree.signal_all(tree, 0) == []
    finally:
        launcher.kill()


def test_a_reused_pid_is_never_signalled() -> None:
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        assert process_tree.signal_all([(stranger.pid, -1)], 15) == []
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()
