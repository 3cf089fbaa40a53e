"""What the agent says about its choices is shown where the user chooses, in real Neovim with the
demo agent: a plan entry's priority in the chat's plan block, a slash command's input hint in the
prompt's completion menu, and the descriptions of modes, config options and their values in the
pickers (``vim.ui.select``'s ``format_item``)."""

from __future__ import annotations

import pytest

from helpers import NOTIFY, chat, session_state, wait_for, wait_idle

pytestmark = pytest.mark.timeout(90)

SHOWN = """_G.shown = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.shown, { prompt = opts.prompt, items = vim.tbl_map(opts.format_item or tostring, items) })
  on_choice(nil, nil)
end
"""
"""A picker that keeps what it would show (each item through ``format_item``) and is dismissed."""


@pytest.fixture
def ui(nvim):
    nvim.exec_lua(NOTIFY + SHOWN)
    nvim.command("Ai")
    wait_idle(nvim)
    return nvim


def shown_picker(nvim, count: int) -> dict:
    return wait_for(lambda: nvim.exec_lua("return _G.shown[...]", count), timeout=20, what=f"picker {count}",
                    nvim=nvim)


def test_a_plan_shows_each_entrys_priority(ui):
    ui.command("Ai send plan-priority")
    wait_for(lambda: "A plan with priorities." in chat(ui), timeout=30, what="the plan's turn", nvim=ui)
    wait_idle(ui)
    lines = chat(ui).splitlines()
    start = lines.index("Plan:")
    assert lines[start + 1:start + 4] == ["- [~] ! Fix the failing test", "- [ ] Update the changelog",
                                          "- [ ] ↓ Tidy the comments"]
    marked = ui.exec_lua("""
        local buf = vim.fn.bufnr('acp://chat/demo/1')
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, { ..., 0 }, { ..., -1 }, { details = true })) do
          if m[4].hl_group == 'AcpNvimPlanHigh' then out[#out + 1] = { m[3], m[4].end_col } end
        end
        return out""", start + 1)
    assert marked == [[6, 7]]  # the "!" alone


def test_the_slash_completion_shows_each_commands_input_hint(ui):
    wait_for(lambda: session_state(ui).get("command_info"), timeout=20, what="the agent's commands", nvim=ui)
    ui.command("Ai open")
    ui.api.set_current_win(ui.funcs.bufwinid("acp://chat/demo/1"))
    ui.input("<C-w>j")
    wait_for(lambda: ui.current.buffer.name == "acp://prompt/demo/1", timeout=20, what="the prompt window", nvim=ui)
    items = ui.exec_lua("return require('acp_nvim.prompt').omnifunc(0, '/edit')")
    edit = next(item for item in items if item["word"] == "/edit")
    assert edit["menu"] == "<abs-path> · Edit a file (2 hunks) after permission, via fs/write_text_file"
    assert edit["info"].endswith("\ninput: <abs-path>")
    usage = next(item for item in ui.exec_lua("return require('acp_nvim.prompt').omnifunc(0, '/usage')")
                 if item["word"] == "/usage")
    assert usage["menu"] == "Send a usage_update with context size and cost"  # no input: no hint


def test_pickers_show_the_descriptions_of_modes_options_and_values(ui):
    ui.command("Ai mode")
    assert "Ask before edits (ask)  ← current — Every edit and command asks for permission" in \
        shown_picker(ui, 1)["items"]
    ui.command("Ai model")
    assert shown_picker(ui, 2)["items"] == ["Demo small  ← current — Fast, short answers",
                                            "Demo large — Slower, longer answers"]
    ui.command("Ai config")
    options = shown_picker(ui, 3)["items"]
    assert options[0] == "Model: Demo small — Which (pretend) model the demo agent uses"
    assert options[1].startswith("Verbose replies: off — A boolean option")
