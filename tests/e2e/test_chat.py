"""The chat buffer end to end: real host, real demo agent, real Neovim."""

from __future__ import annotations

import json
import re

import pytest

from acp_nvim.demo_agent import SCENARIOS
from helpers import buffer_text, status, virt_lines, wait_for, wait_review
from helpers import session_state as state

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
PROMPT = "acp://prompt/demo/1"
STUB_SELECT = """
_G.picked = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.picked, { prompt = opts.prompt, items = items })
  for i, item in ipairs(items) do
    if item:find(_G.choose_pattern, 1, true) then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
"""


def text(nvim, name: str = CHAT) -> str:
    return buffer_text(nvim, name)


def turns(nvim, count: int, name: str = CHAT, timeout: float = 30) -> str:
    return wait_for(lambda: text(nvim, name).count("── turn ended") >= count and text(nvim, name),
                    timeout=timeout, what=f"{count} turn(s) to end in {name}")



def start(nvim) -> None:
    nvim.command("Ai")
    wait_for(lambda: state(nvim).get("state") == "idle", timeout=20, what="the session to start")


def goto_line_with(nvim, needle: str, name: str = CHAT) -> None:
    if nvim.funcs.bufwinid(name) == -1:  # another view (a review) took the tab
        nvim.command("tabnew")
        nvim.command(f"buffer {nvim.funcs.bufnr(name)}")
    nvim.api.set_current_win(nvim.funcs.bufwinid(name))
    lines = nvim.api.buf_get_lines(nvim.funcs.bufnr(name), 0, -1, False)
    nvim.api.win_set_cursor(0, [next(i for i, line in enumerate(lines) if needle in line) + 1, 0])


def type_prompt(nvim, prompt: str, name: str = CHAT) -> None:
    """Type ``prompt`` in the prompt window under chat ``name`` and send it."""
    if nvim.funcs.bufwinid(name) == -1:  # the tab's one chat column shows another session's chat
        nvim.command(f"Ai open {name.removeprefix('acp://chat/')}")
        wait_for(lambda: nvim.funcs.bufwinid(name) != -1, what=f"{name} in the chat column")
    nvim.api.set_current_win(nvim.funcs.bufwinid(name.replace("acp://chat/", "acp://prompt/")))
    nvim.api.set_current_line(prompt)
    nvim.api.input("<C-s>")


def echoed_blocks(chat_text: str) -> list[dict]:
    """The JSON the echo scenario replied with (the last one in the chat)."""
    found = re.findall(r"```json\n(.*?)\n```", chat_text, re.S)
    return json.loads(found[-1])


def test_plan_and_tool_calls_update_in_place(nvim, workspace):
    target = workspace / "notes.txt"
    target.write_text("TODO\n")
    nvim.command("Ai send plan")
    turns(nvim, 1)
    nvim.command(f"Ai send pieces {target}")
    shown = turns(nvim, 2)
    assert shown.count("Plan:") == 1
    assert "- [x] Read the relevant code\n- [x] Make the change\n- [x] Run the tests" in shown
    assert shown.count("Search for TODO") == 1, "one tool call block, updated in place"
    # paths in the workspace as people read them (the full text below keeps them whole)
    assert "● search · Search for TODO in notes.txt · completed" in shown
    assert "│ 3 matches (pretend)" in shown and "→ notes.txt" in shown and f"→ {target}" not in shown
    assert "○ other · tool" not in shown

    nvim.command("Ai locations")
    wait_for(lambda: nvim.funcs.getqflist(), timeout=10, what="the quickfix list")
    assert nvim.funcs.bufname(nvim.funcs.getqflist()[0]["bufnr"]).endswith("notes.txt")

    goto_line_with(nvim, "Search for TODO")
    nvim.api.input("<CR>")
    name = wait_for(lambda: next((b.name for b in nvim.buffers if b.name.startswith("acp://block/")), None),
                    timeout=10, what="the full text of the tool call")
    full = "\n".join(nvim.buffers[nvim.funcs.bufnr(name)][:])
    assert '"pattern": "TODO"' in full, "the full text holds the raw input"
    assert f"Search for TODO in {target}" in full and f"→ {target}" in full, "and the paths whole"


def test_thoughts_usage_title_commands_and_stop_reasons(nvim):
    nvim.command("Ai send hello")
    shown = turns(nvim, 1)
    assert "> Thinking about: hello" in shown and "```python" in shown
    assert "── turn ended: end_turn · 1 in / 58 out tokens ──" in shown
    nvim.command("Ai send usage")
    nvim.command("Ai send title Chat under test")
    turns(nvim, 3)
    wait_for(lambda: "USD" in status(nvim), timeout=10, what="usage in the statusline")
    assert re.search(r"demo/1 · idle · ask · \d+/200k tokens · [\d.]+ USD", status(nvim)), status(nvim)
    assert text(nvim).startswith("# acp.nvim · demo/1 · Chat under test\n")
    details = [line for line in virt_lines(nvim) if line.startswith("demo · ")]
    assert details and "tokens" in details[0] and f"{len(SCENARIOS)} commands" in details[0], details
    names = [c["name"] for c in state(nvim)["command_info"]]
    assert "plan" in names and "echo" in names
    nvim.command("Ai send slow 200")
    wait_for(lambda: "tick 3" in text(nvim), timeout=20)
    nvim.command("Ai cancel")
    assert "── turn ended: cancelled" in turns(nvim, 4)


def test_range_context_sends_unsaved_lines_as_embedded_resource(nvim, workspace):
    source = workspace / "code.py"
    source.write_text("line one\nline two\nline three\n")
    nvim.command(f"edit {source}")
    nvim.api.buf_set_lines(0, 1, 2, False, ["line two, edited but not saved"])
    nvim.command("2,3Ai send echo")
    blocks = echoed_blocks(turns(nvim, 1))
    assert blocks[0] == {"type": "text", "text": "echo"}
    resource = blocks[1]
    assert resource["type"] == "resource"
    assert resource["resource"]["uri"] == f"{source.resolve().as_uri()}#L2-L3"
    assert resource["resource"]["text"] == "line two, edited but not saved\nline three\n"
    assert "— attached: code.py:2-3" in text(nvim)


def test_mentions_attach_files_from_the_prompt_area(nvim, workspace):
    (workspace / "spec.md").write_text("# the spec\n")
    start(nvim)
    type_prompt(nvim, "echo see @spec.md, please")
    blocks = echoed_blocks(turns(nvim, 1))
    assert blocks[0]["text"] == "echo see @spec.md, please"
    assert blocks[1]["resource"] == {"uri": (workspace / "spec.md").resolve().as_uri(),
                                     "text": "# the spec\n", "mimeType": "text/markdown"}


def test_queue_is_visible_editable_and_drains_in_order(nvim):
    nvim.command("Ai send slow 40")
    wait_for(lambda: "tick 1" in text(nvim), timeout=20)
    nvim.command("Ai send echo first queued")
    nvim.command("Ai send echo second queued")
    wait_for(lambda: "  ⏳ queued 2: echo second queued" in virt_lines(nvim), timeout=10, what="the queue")
    assert "  ⏳ queued 1: echo first queued" in virt_lines(nvim)
    assert "2 queued" in status(nvim)

    nvim.command("Ai queue edit")
    queue_buf = wait_for(lambda: max(0, nvim.funcs.bufnr("acp://queue/demo/1")), timeout=10, what="the editor")
    lines = nvim.buffers[queue_buf][:]
    first = lines.index("──── prompt 1")
    nvim.buffers[queue_buf][first:] = ["──── prompt 2", "echo second, edited"]
    nvim.command("write")
    wait_for(lambda: state(nvim).get("queued") == 1, timeout=10, what="the edited queue")
    assert "  ⏳ queued 1: echo second, edited" in virt_lines(nvim)

    shown = turns(nvim, 2)
    assert "second, edited" in shown and "first queued" not in shown
    assert not any("queued" in line for line in virt_lines(nvim))


def test_queue_clear_drops_waiting_prompts(nvim):
    nvim.command("Ai send slow 30")
    wait_for(lambda: "tick 1" in text(nvim), timeout=20)
    nvim.command("Ai send hello never sent")
    wait_for(lambda: state(nvim).get("queued") == 1, timeout=10)
    nvim.command("Ai queue clear")
    wait_for(lambda: state(nvim).get("queued") == 0, timeout=10)
    turns(nvim, 1)
    assert "never sent" not in text(nvim).split("── turn ended")[-1]
    assert state(nvim)["turns"] == 1


def test_two_sessions_at_once_each_with_its_chat(nvim):
    nvim.exec_lua(STUB_SELECT)
    nvim.command("Ai new")
    nvim.command("Ai new")
    chat2 = "acp://chat/demo/2"
    wait_for(lambda: state(nvim, "demo/2").get("state") == "idle" and state(nvim).get("state") == "idle",
             timeout=30, what="both sessions")
    type_prompt(nvim, "slow 20", chat2)
    type_prompt(nvim, "hello from one")
    turns(nvim, 1)
    turns(nvim, 1, chat2)
    assert "You said: hello from one" in text(nvim) and "tick" not in text(nvim)
    assert "tick 19" in text(nvim, chat2) and "You said" not in text(nvim, chat2)
    assert status(nvim).startswith("demo/1 · idle"), "the chat typed in last is current"

    nvim.exec_lua("_G.choose_pattern = 'demo/2'")
    nvim.command("Ai sessions")
    wait_for(lambda: status(nvim).startswith("demo/2"), timeout=10, what="the picked session to be current")
    picked = nvim.exec_lua("return _G.picked")[-1]
    assert picked["prompt"] == "acp.nvim sessions" and len(picked["items"]) == 2


def test_mode_and_model_pickers_switch_and_show_current(nvim):
    nvim.exec_lua(STUB_SELECT)
    start(nvim)
    nvim.exec_lua("_G.choose_pattern = '(code)'")
    nvim.command("Ai mode")
    wait_for(lambda: state(nvim).get("mode") == "code", timeout=10, what="mode code")
    picked = nvim.exec_lua("return _G.picked")[-1]
    assert any(item.endswith("(ask)  ← current") for item in picked["items"]), picked
    assert status(nvim).startswith("demo/1 · idle · code")
    wait_for(lambda: "mode: code" in text(nvim), timeout=10, what="the agent's mode update")

    nvim.exec_lua("_G.choose_pattern = 'large'")
    nvim.command("Ai model")
    wait_for(lambda: state(nvim).get("model") == "Demo large", timeout=10, what="model demo-large")
    assert "Model: Demo large" in text(nvim)
    nvim.command("Ai model demo-small")
    wait_for(lambda: state(nvim).get("model") == "Demo small", timeout=10)
    assert any("mode code · model Demo small" in line for line in virt_lines(nvim))

    nvim.command("Ai send mode")
    turns(nvim, 1)
    wait_for(lambda: state(nvim).get("mode") == "ask", timeout=10, what="the agent switching back")


def test_statusline_and_user_events(nvim):
    nvim.exec_lua("""
        _G.events = {}
        vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvim*', callback = function(ev)
          local reason = ev.match == 'AcpNvimTurnEnd' and ev.data.stop_reason or ''
          table.insert(_G.events, ev.match .. ':' .. ev.data.session .. ':' .. reason)
        end })""")
    assert status(nvim) == ""
    nvim.command("Ai send hello")
    turns(nvim, 1)
    nvim.command("Ai send shell ls -l")
    wait_for(lambda: "waiting for you" in status(nvim), timeout=20, what="the permission request")
    nvim.command("Ai cancel")
    turns(nvim, 2)
    wait_for(lambda: len(nvim.exec_lua("return _G.events")) >= 5, timeout=10)
    assert nvim.exec_lua("return _G.events") == [
        "AcpNvimSessionStart:demo/1:", "AcpNvimTurnEnd:demo/1:end_turn",
        "AcpNvimPermissionRequest:demo/1:", "AcpNvimNeedsYou:demo/1:", "AcpNvimTurnEnd:demo/1:cancelled"]
    assert status(nvim).startswith("demo/1 · idle · ask")


def test_huge_output_is_clipped_and_the_full_text_opens(nvim):
    nvim.exec_lua("require('acp_nvim').setup({ chat = { max_line_chars = 100, max_block_lines = 20 } })")
    nvim.command("Ai send flood 5000")
    shown = turns(nvim, 1)
    assert "chunk00009" in shown and "chunk04999" not in shown
    marker = next(line for line in virt_lines(nvim) if "more line" in line)
    assert "(46.9 kB)" in marker and "<CR> shows all" in marker
    goto_line_with(nvim, "chunk00000")
    nvim.api.input("<CR>")
    name = wait_for(lambda: next((b.name for b in nvim.buffers if b.name.startswith("acp://block/")), None),
                    timeout=10, what="the full text")
    full = "".join(nvim.buffers[nvim.funcs.bufnr(name)][:])
    assert len(full) == 50_000 and full.endswith("chunk04999")


def test_prompt_history_recalls_sent_prompts(nvim):
    start(nvim)
    type_prompt(nvim, "hello one")
    turns(nvim, 1)
    type_prompt(nvim, "hello two")
    turns(nvim, 2)
    nvim.api.set_current_win(nvim.funcs.bufwinid(PROMPT))
    nvim.api.input("<M-p>")
    wait_for(lambda: nvim.api.get_current_line() == "hello two", timeout=5)
    nvim.api.input("<M-p>")
    wait_for(lambda: nvim.api.get_current_line() == "hello one", timeout=5)
    nvim.api.input("<M-n><M-n>")
    wait_for(lambda: nvim.api.get_current_line() == "", timeout=5)


def test_diff_of_a_tool_call_opens_as_a_unified_diff(nvim, workspace):
    nvim.command("Ai send new-file fresh.txt")
    wait_for(lambda: "(new file)" in text(nvim), timeout=20, what="the edit tool call")
    assert re.search(r"± .*fresh\.txt \+\d+ −0 \(new file\)", text(nvim))
    wait_review(nvim)  # the review takes the tab when it opens: let it, then go back to the chat
    goto_line_with(nvim, "Create ")
    nvim.api.input("<CR>")
    name = wait_for(lambda: next((b.name for b in nvim.buffers if b.name.startswith("acp://diff/")), None),
                    timeout=10, what="the diff view")
    buf = nvim.funcs.bufnr(name)
    lines = nvim.buffers[buf][:]
    assert lines[0] == "--- /dev/null" and lines[1].endswith("fresh.txt")
    assert nvim.api.get_option_value("filetype", {"buf": buf}) == "diff"
    nvim.command("Ai cancel")
