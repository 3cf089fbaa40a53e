"""The chat renderer in a real Neovim, fed with render ops from the real transcript model."""

from __future__ import annotations

import pytest
from acp.helpers import plan_entry, start_tool_call, text_block, tool_content, tool_diff_content, update_tool_call
from acp.schema import TerminalToolCallContent, ToolCallLocation

from acp_nvim.core.transcript.block_view import ViewLimits
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.projection import ChatProjection
from helpers import buffer_text, virt_lines, wait_for

pytestmark = pytest.mark.timeout(60)

KEY = "demo/1"
CHAT = "acp://chat/demo/1"


class Feed:
    """A transcript whose ops go to the chat buffer in batches, like the render queue sends them."""

    def __init__(self, nvim, limits: ViewLimits | None = None) -> None:
        self.nvim = nvim
        self.ops: list = []
        self.transcript = Conversation(agent_label="demo")
        self.chat = ChatProjection(self.transcript, self.ops.append, limits)
        nvim.exec_lua("require('acp_nvim.chat').open(...)", KEY, True, [])

    def flush(self) -> None:
        ops, self.ops[:] = list(self.ops), []
        self.nvim.exec_lua("require('acp_nvim.host.ui').flush(..., vim.empty_dict())", {KEY: ops})


def text(nvim) -> str:
    return buffer_text(nvim, CHAT)


def hl_groups_at(nvim, row: int) -> list[str]:
    return nvim.exec_lua("""
        local buf, row = vim.fn.bufnr(...), select(2, ...)
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
          local d = m[4]
          local end_row = d.end_row or m[2]
          local covers = end_row > row or (end_row == row and (d.end_col or 0) > 0)
          if d.hl_group and m[2] <= row and covers then out[#out + 1] = d.hl_group end
        end
        return out""", CHAT, row)


def row_of(nvim, needle: str) -> int:
    lines = nvim.api.buf_get_lines(nvim.funcs.bufnr(CHAT), 0, -1, False)
    return next(i for i, line in enumerate(lines) if needle in line)



def test_every_kind_renders_and_tool_calls_and_plans_update_in_place(nvim):
    feed = Feed(nvim)
    t = feed.transcript
    t.user_message("fix it", ["a.py:1-2"])
    t.thought_chunk("let me think\nabout it")
    feed.flush()
    t.agent_chunk("Here is **bold** and code:\n\n```lua\nlocal x = 1\n```\n")
    t.plan([plan_entry("read"), plan_entry("write")])
    t.tools.tool_call(start_tool_call("t1", "Edit a.py", kind="edit", status="pending",
                                      content=[tool_diff_content("/w/a.py", "x\ny\n", "x\n")]))
    feed.flush()
    assert "○ edit · Edit a.py · pending" in text(nvim)
    t.tools.tool_call(update_tool_call("t1", status="completed", content=[
        tool_diff_content("/w/a.py", "x\ny\n", "x\n"),
        TerminalToolCallContent(type="terminal", terminal_id="term-7"),
        tool_content(text_block("out\n" * 100))], locations=[ToolCallLocation(path="/w/a.py", line=2)]))
    t.plan([plan_entry("read", status="completed"), plan_entry("write", status="in_progress")])
    t.turn_end("refusal")
    feed.flush()
    shown = text(nvim)
    assert shown.startswith("# acp.nvim · demo/1\n")
    assert "## You\nfix it\n— attached: a.py:1-2" in shown
    assert "> let me think\n> about it" in shown
    assert "```lua\nlocal x = 1\n```" in shown
    assert shown.count("Plan:") == 1 and "- [x] read\n- [~] write" in shown
    assert shown.count("Edit a.py") == 1, "the tool call block is updated in place"
    assert "● edit · Edit a.py · completed" in shown
    assert "± /w/a.py +1 −0" in shown and "▸ terminal term-7" in shown
    assert "→ /w/a.py:2" in shown and "… 89 more lines" in shown
    assert "── turn ended: refusal ──" in shown
    assert "AcpNvimThought" in hl_groups_at(nvim, row_of(nvim, "about it"))
    assert "AcpNvimToolDone" in hl_groups_at(nvim, row_of(nvim, "Edit a.py"))
    assert "AcpNvimPlanDone" in hl_groups_at(nvim, row_of(nvim, "- [x] read"))
    assert "AcpNvimUser" in hl_groups_at(nvim, row_of(nvim, "## You"))


def test_streamed_text_is_one_block(nvim):
    feed = Feed(nvim)
    for word in ("one ", "two\n", "three"):
        feed.transcript.agent_chunk(word)
        feed.flush()
    assert text(nvim).endswith("## demo\n\none two\nthree\n\n")


def test_a_streamed_thought_stays_dimmed_as_it_grows(nvim):
    feed = Feed(nvim)
    feed.transcript.thought_chunk("first thought")
    feed.flush()
    feed.transcript.thought_chunk(" continues\nand a second line")
    feed.flush()
    assert "> first thought continues\n> and a second line" in text(nvim)
    assert "AcpNvimThought" in hl_groups_at(nvim, row_of(nvim, "and a second line"))


def md_groups(nvim, row: int) -> list[str]:
    return nvim.exec_lua("""
        local ns = vim.api.nvim_get_namespaces()['acp_nvim.chat.md']
        local marks = vim.api.nvim_buf_get_extmarks(vim.fn.bufnr((...)), ns, { select(2, ...), 0 },
          { select(2, ...), -1 }, { details = true })
        return vim.tbl_map(function(m) return m[4].hl_group end, marks)""", CHAT, row)


def test_markdown_highlights_messages_but_not_tool_output(nvim):
    feed = Feed(nvim)
    feed.transcript.agent_chunk("# Title\n\nsome `code` here\n\n```lua\nlocal x = 1\n```\n")
    feed.transcript.tools.tool_call(start_tool_call("t", "# not a heading", kind="read"))
    feed.flush()
    wait_for(lambda: md_groups(nvim, row_of(nvim, "# Title")), timeout=5, what="markdown highlights")
    assert any(group.startswith("@markup.heading") for group in md_groups(nvim, row_of(nvim, "# Title")))
    assert "@markup.raw.markdown_inline" in md_groups(nvim, row_of(nvim, "some `code`"))
    assert any(group.endswith(".lua") for group in md_groups(nvim, row_of(nvim, "local x = 1")))
    assert md_groups(nvim, row_of(nvim, "# not a heading")) == [], "tool output is not markdown"


def test_markdown_highlighting_follows_a_streaming_message(nvim):
    feed = Feed(nvim)
    feed.transcript.agent_chunk("first **bold**")
    feed.flush()
    wait_for(lambda: md_groups(nvim, row_of(nvim, "first")), timeout=5)
    feed.transcript.agent_chunk("\n\n## Later heading\n")
    feed.flush()
    wait_for(lambda: md_groups(nvim, row_of(nvim, "## Later")), timeout=5, what="the streamed heading")


def test_a_10mb_chunk_and_a_100k_line_output_stay_bounded(nvim):
    feed = Feed(nvim)
    t = feed.transcript
    t.agent_chunk("y" * 10_000_000)
    t.tools.tool_call(start_tool_call("t", "Run", kind="execute", status="completed",
                                      content=[tool_content(text_block("line\n" * 100_000))]))
    ops = list(feed.ops)
    feed.flush()
    assert nvim.eval("1") == 1
    buf = nvim.funcs.bufnr(CHAT)
    assert nvim.api.buf_line_count(buf) < 2100
    longest = nvim.exec_lua("local m = 0 for _, l in ipairs(vim.api.nvim_buf_get_lines(...)) do"
                            " m = math.max(m, #l) end return m", buf, 0, -1, False)
    assert longest <= 1000
    assert any("more line" in line and "shows all" in line for line in virt_lines(nvim))
    assert "… 99,989 more lines" in text(nvim)
    assert sum(len(op["lines"]) for op in ops if op["op"] == "new") < 2100


def test_header_details_and_queue_show_as_virtual_lines(nvim):
    Feed(nvim)
    nvim.exec_lua("require('acp_nvim.host.ui').flush({}, { [...] = select(2, ...) })", KEY, {
        "agent": "demo", "state": "running", "mode": "code", "model": "Demo large", "title": "T",
        "tokens": "1.2k tokens", "queued": 2, "queue": ["first", "second"], "current": True,
        "command_info": [{"name": "plan", "description": "d"}], "turns": 0, "asked": 0, "started": True,
    })
    assert text(nvim).startswith("# acp.nvim · demo/1 · T\n")
    lines = virt_lines(nvim)
    assert "demo · running · mode code · model Demo large · 1.2k tokens · 1 commands (/ completes)" in lines
    assert "  ⏳ queued 1: first" in lines and "  ⏳ queued 2: second" in lines
    assert nvim.exec_lua("return require('acp_nvim').status()") == "demo/1 · running · code · 2 queued · 1.2k tokens"


def test_user_events_fire_on_start_turn_end_permission_and_needs_you(nvim):
    nvim.exec_lua("""
        _G.seen = {}
        vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvim*', callback = function(ev)
          table.insert(_G.seen, ev.match .. ':' .. (ev.data.stop_reason or ''))
        end })""")
    base = {"agent": "demo", "state": "starting", "current": True, "turns": 0, "asked": 0, "started": False}
    update = "require('acp_nvim.state').update('demo/1', ...)"
    nvim.exec_lua(update, base)
    nvim.exec_lua(update, {**base, "state": "idle", "started": True})
    nvim.exec_lua(update, {**base, "state": "waiting", "started": True, "asked": 1})
    nvim.exec_lua(update, {**base, "state": "running", "started": True, "asked": 1, "turns": 1,
                           "stop_reason": "end_turn"})
    assert nvim.exec_lua("return _G.seen") == [
        "AcpNvimSessionStart:", "AcpNvimPermissionRequest:", "AcpNvimNeedsYou:", "AcpNvimTurnEnd:end_turn"]


def test_a_partial_state_is_laid_over_the_kept_one_and_fires_its_events(nvim):
    nvim.exec_lua("""
        _G.ends = {}
        vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvimTurnEnd', callback = function(ev)
          table.insert(_G.ends, { ev.data.turns, ev.data.agent, ev.data.session, ev.data.commands == nil })
        end })""")
    flush = "require('acp_nvim.host.ui').flush({}, { ['demo/1'] = ... })"
    nvim.exec_lua(flush, {"agent": "demo", "state": "running", "current": True, "turns": 0, "asked": 0,
                          "started": True, "commands": ["plan", "read"], "tokens": ""})
    nvim.exec_lua(flush, {"turns": 1, "state": "idle", "partial": True})
    kept = nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1']")
    assert kept == {"agent": "demo", "state": "idle", "current": True, "turns": 1, "asked": 0, "started": True,
                    "commands": ["plan", "read"], "tokens": ""}, "the changes over the kept state, no marker"
    assert nvim.exec_lua("return _G.ends") == [[1, "demo", "demo/1", True]], "the whole state but its commands"
    assert nvim.exec_lua("return require('acp_nvim').status()") == "demo/1 · idle"


def test_completion_of_commands_and_mentions(nvim, workspace):
    (workspace / "alpha.py").write_text("x\n")
    Feed(nvim)
    nvim.exec_lua("require('acp_nvim.host.ui').flush({}, { ['demo/1'] = ... })", {
        "state": "idle", "command_info": [{"name": "plan", "description": "make a plan"},
                                          {"name": "read", "description": "read"}]})
    omni = "return require('acp_nvim.prompt').omnifunc(...)"
    nvim.api.set_current_win(nvim.funcs.bufwinid("acp://prompt/demo/1"))
    assert nvim.api.get_option_value("omnifunc", {"buf": 0}) == "v:lua.require'acp_nvim.prompt'.omnifunc"
    nvim.api.set_current_line("/pl")
    nvim.api.win_set_cursor(0, [nvim.funcs.line("."), 3])  # as in insert mode, after "/pl"
    assert nvim.exec_lua(omni, 1, "") == 0
    assert [i["word"] for i in nvim.exec_lua(omni, 0, "/pl")] == ["/plan"]
    nvim.api.set_current_line("look at @alp")
    nvim.api.win_set_cursor(0, [nvim.funcs.line("."), 12])
    assert nvim.exec_lua(omni, 1, "") == 8
    assert [i["word"] for i in nvim.exec_lua(omni, 0, "@alp")] == ["@alpha.py"]
    nvim.api.set_current_line("not /pl here")
    nvim.api.win_set_cursor(0, [nvim.funcs.line("."), 7])
    assert nvim.exec_lua(omni, 1, "") == -3, "slash commands only at the start of the prompt"


def test_queue_editor_sections_parse(nvim):
    parsed = nvim.exec_lua("return require('acp_nvim.chat.opens').parse_queue(...)", [
        "# help", "──── prompt 2 (with a.py:1-2)", "second", "  edited", "──── prompt", "brand new", ""])
    assert parsed == [{"id": 2, "text": "second\n  edited"}, {"id": 0, "text": "brand new"}]


# -- a long chat: drawn from its newest blocks ------------------------------------------------


def long_chat(turns: int) -> ChatProjection:
    transcript = Conversation(agent_label="demo")
    view = ChatProjection(transcript)
    for n in range(turns):
        transcript.user_message(f"question {n}")
        transcript.agent_chunk("\n".join(f"answer {n} line {i}" for i in range(8)))
        transcript.turn_end("end_turn")
    return view


def test_a_long_chat_draws_its_newest_turns_and_the_older_ones_as_the_user_scrolls_up(nvim):
    from helpers.lua import call_recorder

    view = long_chat(300)
    nvim.exec_lua(call_recorder("chat", "acp_chat_calls"))
    nvim.exec_lua("require('acp_nvim.chat').open(...)", KEY, True, view.replay_ops())
    shown = text(nvim)
    assert "answer 299 line 7" in shown and "question 0\n" not in shown
    assert any("earlier blocks, drawn as you scroll up to them" in line for line in virt_lines(nvim, CHAT))
    nvim.command("normal! G")
    assert nvim.vars["acp_chat_calls"] == [], "nothing is asked while the gap is out of sight"
    pages = 0
    while "question 0\n" not in text(nvim):
        nvim.command("normal! gg")  # the user goes to the top: the gap above comes into sight
        calls = wait_for(lambda: nvim.vars["acp_chat_calls"], what="a page asked for")
        nvim.vars["acp_chat_calls"] = []
        assert len(calls) == 1, calls
        action, key, arg = calls[0]
        assert (action, key) == ("page", KEY)
        after = arg["after"] if arg["after"] is not None else None
        page = view.page(arg["before"], after)
        nvim.exec_lua("require('acp_nvim.host.ui').flush(..., vim.empty_dict())", {KEY: page})
        pages += 1
    assert pages > 3
    expected = "\n".join(f"answer {n} line 7" for n in range(300))
    drawn = [line for line in text(nvim).split("\n") if line.endswith(" line 7")]
    assert "\n".join(drawn) == expected, "every turn, in order, once"
    assert not any("earlier blocks" in line for line in virt_lines(nvim, CHAT))
    nvim.exec_lua("require('acp_nvim.host.ui').flush(..., vim.empty_dict())", {KEY: view.page(3, None)})
    assert text(nvim).count("question 0\n") == 1, "a late page for a closed gap draws nothing twice"
