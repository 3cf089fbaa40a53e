"""The unit tier starts no process (tests/conftest.py applies helpers/tier.py to each of its tests): ``make check``
stays fast and needs neither Neovim nor an agent. These tests fail if a way slips through the guard."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys

import pynvim
import pytest

REFUSED = "tests/unit starts no process"


def test_subprocess_is_refused():
    with pytest.raises(AssertionError, match=REFUSED):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    with pytest.raises(AssertionError, match=REFUSED):
        subprocess.Popen(["true"])
    with pytest.raises(AssertionError, match=REFUSED):
        os.system("true")


async def test_asyncio_subprocesses_are_refused():
    with pytest.raises(AssertionError, match=REFUSED):
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    with pytest.raises(AssertionError, match=REFUSED):
        await asyncio.create_subprocess_shell("true")


def test_neovim_is_refused():
    with pytest.raises(AssertionError, match=REFUSED):
        pynvim.attach("child", argv=["nvim", "--embed", "--headless"])


@pytest.mark.parametrize("method", ["spawn", "fork", "forkserver"])
def test_multiprocessing_is_refused(method):
    with pytest.raises(AssertionError, match=REFUSED):
        multiprocessing.get_context(method).Process(target=print).start()
