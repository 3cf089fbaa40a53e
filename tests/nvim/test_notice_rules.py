"""The notices' rules in Lua (``acp_nvim.state.notices``), driven with session states as Python sends them:
who is told, when, once per state, and what reaches the terminal (an agent's title never escapes its
escape sequence)."""

from __future__ import annotations

import pytest

from helpers import NOTIFY, notes

pytestmark = pytest.mark.timeout(30)

IDLE = {"agent": "demo", "state": "idle", "turns": 0, "title": "", "waiting": []}


def change(nvim, old: dict | None, new: dict, key: str = "demo/1") -> None:
    nvim.exec_lua("require('acp_nvim.state.notices').changed(...)", key, old, new)


def sent(nvim) -> list[str]:
    return nvim.exec_lua("return require('acp_nvim.state.notices').sent")


@pytest.fixture
def lua(nvim):
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua("""_G.events = {}
vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvimNeedsYou', callback = function(ev)
  table.insert(_G.events, { session = ev.data.session, what = ev.data.what, looking = ev.data.looking })
end })""")
    return nvim


def focus(nvim, focused: bool) -> None:
    nvim.exec_lua("require('acp_nvim.state.notices')")  # loaded by the first :Ai: from then on it follows the focus
    nvim.command("doautocmd " + ("FocusGained" if focused else "FocusLost"))


def test_a_review_that_waits_is_told_once_with_the_user_event(lua):
    waiting = {**IDLE, "state": "waiting", "waiting": ["review"], "title": "fix the parser"}
    change(lua, IDLE, waiting)
    change(lua, waiting, {**waiting})
    assert notes(lua) == ["[acp.nvim] demo/1 · fix the parser needs you: review — ]w or :Ai next goes there"]
    assert lua.exec_lua("return _G.events") == [{"session": "demo/1", "what": ["review"], "looking": False}]
    assert sent(lua) == []  # Neovim has the focus: no terminal notification


def test_looking_at_the_chat_silences_the_notice_but_not_the_event(lua):
    lua.command("let b:acp_nvim_session = 'demo/1'")
    change(lua, IDLE, {**IDLE, "state": "waiting", "waiting": ["prompt"]})
    assert notes(lua) == []
    assert lua.exec_lua("return _G.events")[0]["looking"] is True


def test_unfocused_the_terminal_is_told_by_its_kind(lua):
    focus(lua, False)
    change(lua, IDLE, {**IDLE, "turns": 1, "stop_reason": "end_turn"})
    assert sent(lua) == ["\x07"]  # an unknown terminal: the bell
    lua.exec_lua("require('acp_nvim.state.notices').given = {}")
    lua.exec_lua("vim.env.TERM = 'foot'")
    change(lua, {**IDLE, "turns": 1}, {**IDLE, "turns": 2, "stop_reason": "max_tokens"})
    assert sent(lua)[-1] == "\x1b]777;notify;acp.nvim;demo/1 hit its token limit\x07"


def test_a_hostile_title_cannot_end_the_sequence(lua):
    focus(lua, False)
    lua.exec_lua("vim.env.TERM_PROGRAM = 'WezTerm'")
    title = "x\x07\x1b]52;c;ZXZpbA==\x07\x1b\\;\u009c done"
    change(lua, IDLE, {**IDLE, "turns": 1, "stop_reason": "end_turn", "title": title})
    seq = sent(lua)[-1]
    assert seq.startswith("\x1b]9;acp.nvim: demo/1 · x") and seq.endswith(" finished its turn\x07")
    body = seq[len("\x1b]9;"):-1]
    assert not any(ch in body for ch in "\x07\x1b\u009c")


def test_inside_tmux_an_osc_is_wrapped_for_its_passthrough(lua):
    wrapped = lua.exec_lua(
        "return require('acp_nvim.state.notices').sequence('osc9', 'acp.nvim', 'hi', { TMUX = '1' })")
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;acp.nvim: hi\x07\x1b\\"
    detected = lua.exec_lua("return require('acp_nvim.state.notices').detect({ TMUX = '1', TERM_PROGRAM = 'WezTerm' })")
    assert detected == "bell"


@pytest.mark.parametrize(("when", "focused", "told", "terminal"), [
    ("never", False, 0, 0), ("always", True, 1, 1), ("unfocused", True, 1, 0), ("unfocused", False, 1, 1)])
def test_notify_when(nvim, when, focused, told, terminal):
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua("require('acp_nvim').setup({ notify = { when = ... } })", when)
    focus(nvim, focused)
    change(nvim, IDLE, {**IDLE, "turns": 1, "stop_reason": "end_turn"})
    assert len(notes(nvim)) == told
    assert len(sent(nvim)) == terminal


def test_terminal_false_keeps_the_terminal_quiet(nvim):
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua("require('acp_nvim').setup({ notify = { terminal = false } })")
    focus(nvim, False)
    change(nvim, IDLE, {**IDLE, "turns": 1, "stop_reason": "end_turn"})
    assert len(notes(nvim)) == 1 and sent(nvim) == []


def test_w_keys_are_mapped_once_a_session_exists_unless_the_user_mapped_them(nvim):
    nvim.command("nnoremap [w <Cmd>let g:mine = 1<CR>")
    assert nvim.funcs.maparg("]w", "n") == ""
    change(nvim, IDLE, IDLE)
    assert "acp.nvim" in nvim.funcs.maparg("]w", "n", False, True)["desc"]
    assert nvim.funcs.maparg("[w", "n") == "<Cmd>let g:mine = 1<CR>"  # the user's own stays


def test_checkhealth_says_how_notices_reach_the_terminal_and_what_is_warm(nvim):
    nvim.exec_lua("vim.env.TERM_PROGRAM = 'WezTerm'; vim.env.TMUX = nil")
    nvim.exec_lua("require('acp_nvim').setup({ warm = 'default', "
                  "agents = { big = { command = 'big', warm = true } } })")
    nvim.command("checkhealth acp_nvim")
    health = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "notices go to the terminal as OSC 9 desktop notifications" in health
    assert "kept warm (started when Neovim is idle, closed after 600s unused): big, demo" in health
