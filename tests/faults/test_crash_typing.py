"""The crash of issue 35 as a functional test: an agent that streams chunks, writes one stderr line
and calls ``os._exit(1)`` while the user types in the chat's prompt area (Insert mode), with keys
typed from the harness's connection and an ``nvim_eval`` from a second one (``make faults``'s
``crash_abrupt_typing``). The verdict is what the user is told and which path told them, never a
duration: the notice is shown, and no message went out with Neovim's error flag (after which the
next mode message holds every key and request for a second). The stall itself is measured by
``make bench`` (``key_stall_faults_*``)."""

from __future__ import annotations

import pytest

from faults import cases, matrix
from faults.driver import Environment

pytestmark = pytest.mark.timeout(180)


def test_a_crash_while_typing_is_told_without_the_error_flag() -> None:
    env = Environment()
    try:
        result = matrix.run(env, cases.load()["crash_abrupt_typing"])
    finally:
        env.cleanup()
    functional = [f for f in result.failures if not f.startswith("typed-key stall")]
    assert result.told, result.details()
    assert not functional, result.details()
    assert not any("error flag" in f for f in result.failures), result.details()
    assert result.usable and not result.lost and not result.orphans, result.details()
