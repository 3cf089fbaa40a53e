"""Notices whose errors never make Neovim wait (lua/acp_nvim/kit/notify.lua, |acp_nvim-error-notices|),
in a real Neovim with a UI attached and the user in Insert mode: an ERROR for Neovim's own vim.notify is
echoed in ErrorMsg and kept in :messages, never with the error flag (after which the next mode message
waits a second); a vim.notify the user replaced gets every notice with its level."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)

RECORD_ECHOES = """
_G.echoes = {}
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  table.insert(_G.echoes, { text = chunks[1][1], hl = chunks[1][2] or '', history = history,
    err = (opts or {}).err == true })
  return echo(chunks, history, opts)
end
"""


@pytest.fixture
def ui(nvim):
    nvim.ui_attach(100, 40, rgb=True, ext_linegrid=True)
    yield nvim
    nvim.ui_detach()


def test_an_error_with_the_builtin_notify_is_echoed_without_the_error_flag(ui):
    ui.exec_lua(RECORD_ECHOES)
    ui.command("startinsert")
    ui.exec_lua("require('acp_nvim.kit.notify').notify('[acp.nvim] agent exited with code 1', vim.log.levels.ERROR)")
    echoes = ui.exec_lua("return _G.echoes")
    assert echoes == [{"text": "[acp.nvim] agent exited with code 1", "hl": "ErrorMsg", "history": True, "err": False}]
    assert "agent exited with code 1" in ui.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert ui.api.get_mode()["mode"] == "i"


def test_other_levels_go_to_the_builtin_notify_as_before(ui):
    ui.exec_lua(RECORD_ECHOES)
    ui.exec_lua("require('acp_nvim.kit.notify').notify('careful', vim.log.levels.WARN)")
    assert ui.exec_lua("return _G.echoes") == [{"text": "careful", "hl": "WarningMsg", "history": True, "err": False}]


def test_a_replaced_notify_gets_every_notice_with_its_level(ui):
    seen = ui.exec_lua("""
        local seen = {}
        vim.notify = function(msg, level) table.insert(seen, { msg, level }) end
        local kit = require('acp_nvim.kit.notify')
        kit.notify('boom', vim.log.levels.ERROR)
        kit.notify('fyi', vim.log.levels.INFO)
        return { seen, kit.builtin() }""")
    assert seen == [[["boom", 4], ["fyi", 2]], False]


def test_the_host_side_notices_go_through_the_kit(ui):
    """The Python side's notices (agent exit, protocol errors) use the same path."""
    from acp_nvim.nvim.bridge import NOTIFY
    ui.exec_lua(RECORD_ECHOES)
    ui.exec_lua(NOTIFY, "[acp.nvim] the Python host exited", 4)
    assert ui.exec_lua("return _G.echoes")[0]["err"] is False
