"""Views the chat opens (lua/acp_nvim/chat/opens.lua) in a real headless Neovim."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(30)

SHOW = "return require('acp_nvim.chat.opens').show(...)"


def test_show_fills_a_read_only_scratch_buffer_and_refreshes_it_in_place(nvim):
    buf = nvim.exec_lua(SHOW, "acp://block/demo/1/3", ["first"], "markdown")
    assert nvim.api.get_current_buf().number == buf
    assert nvim.api.get_option_value("modifiable", {"buf": buf}) is False
    assert nvim.api.get_option_value("filetype", {"buf": buf}) == "markdown"
    assert nvim.exec_lua(SHOW, "acp://block/demo/1/3", ["second"], "markdown") == buf
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["second"]


def test_show_never_takes_a_buffer_whose_name_only_contains_the_name(nvim):
    long = nvim.exec_lua(SHOW, "acp://block/demo/1/33", ["block 33"], "markdown")
    short = nvim.exec_lua(SHOW, "acp://block/demo/1/3", ["block 3"], "markdown")
    assert short != long
    assert nvim.api.buf_get_lines(long, 0, -1, False) == ["block 33"]
    assert nvim.api.buf_get_name(short) == "acp://block/demo/1/3"


def test_the_queue_editor_text_is_not_an_undo_step(nvim):
    buf = nvim.exec_lua("return require('acp_nvim.chat.opens').edit_queue(...)", "demo/1",
                        [{"id": 1, "text": "do this", "context": ""}])
    nvim.command("silent! undo")
    assert "do this" in nvim.api.buf_get_lines(buf, 0, -1, False)
    assert nvim.api.get_option_value("buftype", {"buf": buf}) == "acwrite"
