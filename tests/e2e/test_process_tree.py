"""An agent's children are ended with it, even when its launcher dies first."""

from __future__ import annotations

import subprocess
import sys

import pytest

from acp_nvim.core.agent import process_tree
from helpers import async_wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


async def test_reap_ends_the_children_a_dead_launcher_left_behind() -> None:
    launcher = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"])
    try:
        def both_children() -> list[process_tree.Proc] | None:
            found = process_tree.descendants(launcher.pid)
            return found if len(found) == 2 else None

        tree = await async_wait_for(both_children, what="both children of the launcher")
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
