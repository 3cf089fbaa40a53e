"""Review comments end to end: `gC` typed in a real review, the comment typed into vim.ui.input,
the verdict typed; the chat draws the comment under the tool call and the demo agent, which echoes
the prompt it gets, shows that the comment reached it at the head of the next prompt."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import answer_keys, capture_notes, chat, notes, wait_for, wait_review

COMMENTS_LUA = """
local ns = require('acp_nvim.review.comments').NS
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
  local vt = m[4].virt_text
  out[#out + 1] = { m[2] + 1, vt and vt[1][1] or vim.NIL }
end
return out
"""


def make_file(workspace: Path, name: str = "sample.txt", lines: int = 8) -> Path:
    path = workspace / name
    path.write_text("".join(f"line {i}\n" for i in range(1, lines + 1)))
    return path


def marks(nvim) -> list[list[object]]:
    """The comment marks of the current buffer: [line, virtual text or None] each."""
    return nvim.exec_lua(COMMENTS_LUA)


def comment(nvim, keys: str, text: str) -> None:
    """Type ``keys`` (ending in ``gC``) as a user does, then the comment when vim.ui.input asks."""
    before = len(marks(nvim))
    nvim.input(keys)
    wait_for(lambda: nvim.api.get_mode()["mode"] == "c", timeout=10, what="the comment's input line", nvim=nvim)
    nvim.input(text + "<CR>")
    wait_for(lambda: len(marks(nvim)) > before, timeout=10, what="the comment's marks", nvim=nvim)


def under_the_tool_call(text: str, line: str) -> bool:
    """Whether ``line`` (a pattern) is a line of the edit's tool call block in the chat."""
    return re.search(r"^. edit · Edit sample\.txt · \w+\n(  .*\n)*  " + line + "$", text, re.MULTILINE) is not None


def wait_turn_end(nvim, count: int = 1) -> str:
    return wait_for(lambda: chat(nvim).count("turn ended") >= count and chat(nvim), timeout=20,
                    what="the end of the turn", nvim=nvim)


def next_prompt_reply(nvim) -> str:
    """Send another prompt; the demo agent's reply echoes it (the editor's note first)."""
    nvim.command("Ai send hello again")
    text = wait_turn_end(nvim, 2)
    return text[text.rindex("hello again"):] if "hello again" in text else text


@pytest.mark.timeout(90)
def test_a_line_comment_reaches_the_agent_with_the_accept_and_shows_under_the_tool_call(nvim, workspace):
    path = make_file(workspace)
    nvim.command(f"Ai send edit {path}")
    wait_review(nvim)
    comment(nvim, "3GgC", "rename this line")
    assert marks(nvim) == [[3, "✎ rename this line"]]
    answer_keys(nvim, "ga")
    text = wait_turn_end(nvim)
    assert "Edited" in text
    assert under_the_tool_call(text, r"✎ sample\.txt:3 \(proposal\): rename this line"), text
    assert "1 review comment(s) for the agent, sent with your next prompt" in text
    reply = next_prompt_reply(nvim)
    assert "You said: [Note from the editor, acp.nvim]" in reply
    assert "The user commented on the review of" in reply and "(answered: accepted)" in reply
    assert "line 3 of your proposed text ('line 3'): rename this line" in reply


@pytest.mark.timeout(90)
def test_a_comment_on_the_current_side_goes_with_a_reject(nvim, workspace):
    path = make_file(workspace)
    before = path.read_text()
    nvim.command(f"Ai send edit {path}")
    wait_review(nvim)
    nvim.command("wincmd h")  # the left window: the file as it is now
    comment(nvim, "5GgC", "keep this as it is")
    answer_keys(nvim, "gr")
    text = wait_turn_end(nvim)
    assert path.read_text() == before
    assert "Edit rejected" in text
    assert under_the_tool_call(text, r"✎ sample\.txt:5 \(current\): keep this as it is"), text
    reply = next_prompt_reply(nvim)
    assert "(answered: rejected)" in reply
    assert "line 5 of the file as it was before your edit ('line 5'): keep this as it is" in reply


@pytest.mark.timeout(90)
def test_a_visual_range_comment_names_its_lines(nvim, workspace):
    path = make_file(workspace)
    nvim.command(f"Ai send edit {path}")
    wait_review(nvim)
    comment(nvim, "2GVjjgC", "these three")
    assert [line for line, _ in marks(nvim)] == [2, 3, 4]
    assert nvim.api.get_mode()["mode"] == "n"
    nvim.input("ggOa line of mine<Esc>")  # an edit above: the comment follows its lines
    wait_for(lambda: [line for line, _ in marks(nvim)] == [3, 4, 5], timeout=10, what="the marks to move",
             nvim=nvim)
    answer_keys(nvim, "ga")
    text = wait_turn_end(nvim)
    assert under_the_tool_call(text, r"✎ sample\.txt:3-5 \(proposal\): these three"), text
    lines = path.read_text().splitlines()
    assert lines[0] == "a line of mine"
    reply = next_prompt_reply(nvim)
    assert "lines 3-5 of your proposed text ('line 2' ⏎ 'line 3' ⏎ 'line 4'): these three" in reply


@pytest.mark.timeout(90)
def test_a_key_of_your_own_comments_on_your_loaded_buffer_which_gets_its_gC_back(nvim, workspace):
    path = make_file(workspace)
    nvim.command(f"edit {path}")
    nvim.command("nnoremap <buffer> gC <Cmd>let g:mine = 1<CR>")
    nvim.exec_lua("vim.keymap.set('n', '<F2>', '<Plug>(AcpNvimReviewComment)')")
    live = nvim.current.buffer.number
    nvim.command(f"Ai send edit {path}")
    wait_review(nvim)
    nvim.command("wincmd h")
    assert nvim.current.buffer.number == live  # the left side is the user's own buffer
    comment(nvim, "4G<F2>", "via my key")
    answer_keys(nvim, "ga")
    text = wait_turn_end(nvim)
    assert under_the_tool_call(text, r"✎ sample\.txt:4 \(current\): via my key"), text
    assert nvim.exec_lua(f"return #vim.api.nvim_buf_get_extmarks({live}, "
                         "require('acp_nvim.review.comments').NS, 0, -1, {})") == 0
    assert "g:mine" in nvim.exec_lua(f"return vim.api.nvim_buf_call({live}, function() "
                                     "return vim.fn.maparg('gC', 'n') end)")
    capture_notes(nvim)
    nvim.input("<F2>")
    wait_for(lambda: any("works in a review window" in note for note in notes(nvim)), timeout=10,
             what="the one-line notice outside a review", nvim=nvim)
