"""The chat's keys in real Neovim with the real host and demo agent, typed as keys: no default key is a
command Vim has in normal mode (checked against Neovim's own :help index and its default mappings), `u` and
`<C-r>` stay Vim's, the restart key asks first, and the <Plug> mappings work (:help acp_nvim-keys)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import buffer_text, wait_for

pytestmark = pytest.mark.timeout(360)

CHAT = "acp://chat/demo/1"

ALLOWED = {
    "<CR>": "keymaps.open acts on what is under the cursor (a block, a → location) and sends in the prompt "
            "area, as the issue asks (`gf`/`<CR>` open what the agent sent)",
    "gf": "on a ▣ line opens the link or resource the agent sent (issue 33); anywhere else it is Vim's gf",
    "gx": "on a ▣ line opens the image or audio the agent sent (issue 33); anywhere else it is Vim's gx",
}
"""Chat keys that are Vim keys on purpose; nothing else may be one."""

# ":help index" writes keys as `CTRL-X`, `<CR>`, `["x]p`, `gr{char}`, `CTRL-W j`, `[ CTRL-D`, `N%`.
_ARG = re.compile(r"\{[^}]*\}.*$")


def vim_keys(index_txt: str) -> set[str]:
    """The keys of every Normal-mode command :help index lists (its "not used" rows left out), in
    <> notation: the fixed part of each (`gr{char}` is `gr`, as a map of `grx` would shadow it)."""
    section = index_txt.split("*normal-index*", 1)[1].split("*visual-index*", 1)[0]
    keys = set()
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        columns = [c for c in line.split("\t") if c]
        if len(columns) < 2:
            continue
        char = columns[1].strip()
        if "not used" in line or ("see |" in line and " below" in line) or "window commands, see" in line:
            continue  # g{char}, z{char}, [{char}, ]{char}, CTRL-W {char}: the index lists each one below
        char = char.replace('["x]', "").removeprefix("N").strip() or char
        char = _ARG.sub("", char)
        char = re.sub(r"CTRL-(\S+)", lambda m: f"<C-{m.group(1)}>", char)
        char = char.replace(" ", "")
        if char:
            keys.add(char)
    return keys


def raw(nvim, keys: list[str]) -> list[str]:
    """Each key sequence as the bytes Neovim sees (so `<C-r>`, `<C-R>` and `\x12` compare equal)."""
    return nvim.exec_lua("""local out = {}
      for i, k in ipairs(...) do out[i] = vim.api.nvim_replace_termcodes(k, true, true, true) end
      return out""", keys)


def shadows(mine: str, builtin: str) -> bool:
    """A map of `mine` takes `builtin` away: the same keys, or one starts the other (Vim then waits
    for more keys or never sees the command)."""
    return mine.startswith(builtin) or builtin.startswith(mine)


def start_chat(nvim) -> None:
    nvim.command("Ai send echo hello")
    wait_for(lambda: "── turn ended" in buffer_text(nvim, CHAT), what="the first turn", nvim=nvim)
    nvim.command(f"call win_gotoid(bufwinid('{CHAT}'))")
    nvim.command("stopinsert")


def test_no_default_key_of_the_chat_is_a_vim_command(nvim):
    runtime = Path(nvim.exec_lua("return vim.env.VIMRUNTIME"))
    builtins = vim_keys((runtime / "doc" / "index.txt").read_text("utf-8"))
    assert {"u", "<C-R>", "e", "R", "L", "N", "W", "<C-C>", "gR", "[d", "z<CR>"} <= builtins, "the index is read"
    # Neovim's own default mappings (gcc, grn, [q, <C-L>, …) are Vim keys too
    defaults = nvim.exec_lua("""local out = {}
      for _, m in ipairs(vim.api.nvim_get_keymap('n')) do
        if not (m.desc or ''):find('^acp%.nvim') and not m.lhs:find('^<Plug>') then out[#out + 1] = m.lhs end
      end
      return out""")
    start_chat(nvim)
    mapped = nvim.exec_lua("""local out = {}
      for _, m in ipairs(vim.api.nvim_buf_get_keymap(0, 'n')) do
        if (m.desc or ''):find('^acp%.nvim') then out[#out + 1] = m.lhs end
      end
      for _, m in ipairs(vim.api.nvim_get_keymap('n')) do
        if (m.desc or ''):find('^acp%.nvim') and not m.lhs:find('^<Plug>') then out[#out + 1] = m.lhs end
      end
      return out""")
    assert {"<C-S>", "\\R", "\\r", "\\e", "]w"} <= set(mapped), mapped
    vim_raw = dict(zip(raw(nvim, sorted(builtins)), sorted(builtins), strict=True))
    vim_raw.update(dict(zip(raw(nvim, defaults), defaults, strict=True)))
    allowed = set(raw(nvim, list(ALLOWED)))
    taken = [(lhs, vim_raw[b]) for lhs, mine in zip(mapped, raw(nvim, mapped), strict=True) if mine not in allowed
             for b in vim_raw if shadows(mine, b)]
    assert not taken, f"chat keys that take a Vim command away: {taken}"
    for key in ("u", "<C-r>", "e", "R", "L", "N", "W", "<C-c>"):
        assert nvim.exec_lua("return vim.fn.maparg(..., 'n')", key) == "", f"{key} is mapped in the chat"


def test_redo_and_undo_in_the_chat_are_vims(nvim):
    start_chat(nvim)
    nvim.input("Ggithe draft stays<Esc>")
    wait_for(lambda: nvim.current.buffer[-1] == "the draft stays", what="the typed draft", nvim=nvim)
    nvim.input("<C-r>u<C-r>")
    nvim.command("Ai send echo after the keys")  # runs after the keys: the typeahead is empty by now
    wait_for(lambda: buffer_text(nvim, CHAT).count("── turn ended") == 2, what="a turn after the keys", nvim=nvim)
    text = buffer_text(nvim, CHAT)
    assert "agent restarted" not in text and "restart" not in text, "<C-r> restarted nothing"
    assert nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1'].turns") == 2


ASKED = """
_G.asked = {}
local select = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.asked, { prompt = opts.prompt, items = items })
  return select(items, opts, on_choice)  -- Neovim's own (inputlist): answered by typed keys
end"""


def wait_asked(nvim) -> None:
    """Neovim's own vim.ui.select asks on the command line (a numbered list, then a number)."""
    wait_for(lambda: nvim.api.get_mode()["mode"] == "c", what="the restart question")


def wait_answered(nvim) -> None:
    wait_for(lambda: nvim.api.get_mode() == {"mode": "n", "blocking": False}, what="the question to go")


def test_the_restart_key_asks_first_and_the_plug_mapping_works(nvim):
    start_chat(nvim)
    nvim.exec_lua(ASKED)
    nvim.input("\\R")  # <LocalLeader>R; the default maplocalleader is a backslash
    wait_asked(nvim)
    nvim.input("2<CR>")  # "Do not restart"
    wait_answered(nvim)
    asked = nvim.exec_lua("return _G.asked")
    assert len(asked) == 1
    assert "Restart demo" in asked[0]["prompt"] and "demo/1" in asked[0]["prompt"]
    assert "agent process is ended" in asked[0]["prompt"], asked[0]["prompt"]
    assert asked[0]["items"] == ["Restart demo", "Do not restart"]
    assert "agent restarted" not in buffer_text(nvim, CHAT)

    # a key of the user's own, through the <Plug> mapping
    nvim.exec_lua("vim.keymap.set('n', '<F7>', '<Plug>(AcpNvimRestart)')")
    nvim.input("<F7>")
    wait_asked(nvim)
    nvim.input("1<CR>")
    wait_answered(nvim)
    wait_for(lambda: "agent restarted" in buffer_text(nvim, CHAT), what="the confirmed restart", nvim=nvim)
    assert len(nvim.exec_lua("return _G.asked")) == 2
    nvim.command("Ai send echo after the restart")
    wait_for(lambda: "after the restart" in buffer_text(nvim, CHAT).rsplit("agent restarted", 1)[1]
             and buffer_text(nvim, CHAT).count("── turn ended") >= 2, what="a turn after the restart", nvim=nvim)
    assert buffer_text(nvim, CHAT).count("agent restarted") == 1, "the declined restart did not happen"


def test_the_restart_key_during_a_turn_says_it_ends_the_turn_and_escape_keeps_it(nvim):
    start_chat(nvim)
    nvim.exec_lua(ASKED)
    nvim.command("Ai send slow 60")
    wait_for(lambda: "tick 3" in buffer_text(nvim, CHAT), what="the slow turn to stream", nvim=nvim)
    nvim.command(f"call win_gotoid(bufwinid('{CHAT}'))")
    nvim.input("\\R")
    wait_asked(nvim)
    nvim.input("<Esc>")
    wait_answered(nvim)
    [asked] = nvim.exec_lua("return _G.asked")
    assert "running turn is cancelled" in asked["prompt"], asked["prompt"]
    wait_for(lambda: buffer_text(nvim, CHAT).count("── turn ended") == 2, what="the slow turn's end", nvim=nvim)
    text = buffer_text(nvim, CHAT)
    assert "turn ended: end_turn" in text.rsplit("## You", 1)[1], "the turn ran to its end"
    assert "agent restarted" not in text


def test_plug_send_from_a_key_of_your_own(nvim):
    start_chat(nvim)
    nvim.exec_lua("vim.keymap.set({ 'n', 'i' }, '<F8>', '<Plug>(AcpNvimSend)')")
    nvim.input("<C-w>jGiecho sent by my key<F8>")  # in the prompt window, under the chat
    wait_for(lambda: buffer_text(nvim, CHAT).count("── turn ended") == 2, what="the prompt sent by <F8>", nvim=nvim)
    assert "## You\necho sent by my key" in buffer_text(nvim, CHAT)


def test_a_leader_key_with_nothing_to_act_on_types_nothing(nvim):
    """<LocalLeader>r with no failed prompt says so; it must not fall through to \\ then r{char}."""
    start_chat(nvim)
    nvim.api.win_set_cursor(0, [1, 0])
    before = nvim.current.buffer[:]
    nvim.input("\\rX")
    nvim.command("Ai send echo after the keys")  # runs after the keys: the typeahead is empty by now
    wait_for(lambda: buffer_text(nvim, CHAT).count("── turn ended") == 2, what="a turn after the keys", nvim=nvim)
    assert nvim.current.buffer[0] == before[0], "r replaced a character"


def test_every_keymaps_action_has_its_plug_mapping(nvim):
    """Each `keymaps` option's action is a <Plug>(AcpNvim…) mapping in the same modes (plugin/acp_nvim.lua
    lists them so that nothing loads at startup; acp_nvim.chat.actions runs them)."""
    actions = nvim.exec_lua("""local out = {}
      for name, a in pairs(require('acp_nvim.chat.actions').actions) do
        if a.plug then out[name] = { plug = a.plug, modes = a.modes } end
      end
      return out""")
    options = nvim.exec_lua("return vim.tbl_keys(require('acp_nvim').config.keymaps)")
    assert set(options) == set(actions), "an option without a <Plug>, or a <Plug> without an option"
    for name, action in actions.items():
        lhs = f"<Plug>(AcpNvim{action['plug']})"
        for mode in ("n", "i"):
            defined = nvim.exec_lua("local lhs, mode = ...; return vim.fn.maparg(lhs, mode) ~= ''", lhs, mode)
            assert defined == (mode in action["modes"]), f"{lhs} in mode {mode} ({name})"
