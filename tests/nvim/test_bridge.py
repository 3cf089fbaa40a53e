"""The bridge's last line of defence: text msgpack cannot encode never costs a call."""

from __future__ import annotations

import pytest

from acp_nvim.nvim.bridge import Bridge
from helpers import wait_for

pytestmark = pytest.mark.timeout(30)


def test_a_lone_surrogate_in_a_notification_is_replaced_not_lost(nvim):
    Bridge(nvim).lua_async("vim.g.acp_test_text = ...", {"k": ["ok", "\ud83d lone", "\ud83d\ude00"]})
    value = wait_for(lambda: nvim.vars.get("acp_test_text"), what="the call to arrive")
    assert value == {"k": ["ok", "\ufffd lone", "😀"]}


def test_clean_text_goes_out_untouched(nvim):
    Bridge(nvim).lua_async("vim.g.acp_test_text = ...", "naïve ✓")
    assert wait_for(lambda: nvim.vars.get("acp_test_text")) == "naïve ✓"
