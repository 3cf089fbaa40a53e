"""Log buffers in real Neovim, fed by the real Python host and the demo agent."""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path

import pytest

from helpers import buffer_text, notify_stub, virt_lines, wait_for

CHAT = "acp://chat/demo/1"
LOG = "acp://log/demo/1"
HEADER = re.compile(r"^\d\d:\d\d:\d\d\.\d{3} (TRC|DBG|INF|WRN|ERR) [→←·] ")
PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")

CAPTURE_NOTIFY = notify_stub("acp_test_notes")

pytestmark = pytest.mark.timeout(90)


def setup(nvim, **log):
    nvim.exec_lua("require('acp_nvim').setup({ log = ... })", log or {"level": "debug"})


def turn(nvim, prompt: str, count: int = 1, chat: str = CHAT) -> str:
    nvim.command(f"Ai send {prompt}")
    return wait_for(lambda: buffer_text(nvim, chat).count("turn ended") >= count and buffer_text(nvim, chat),
                    timeout=30, what=f"turn {count} ({prompt}) to end")


def headers(nvim, name: str = LOG) -> list[str]:
    return [line for line in buffer_text(nvim, name).split("\n") if HEADER.match(line)]


def open_log(nvim, args: str = "", name: str = LOG) -> int:
    """``:Ai log`` (asynchronous, like every :Ai command); returns the log window."""
    nvim.command(f"Ai log {args}".rstrip())
    wait_for(lambda: nvim.funcs.bufnr(name) != -1 and nvim.funcs.bufwinid(name) != -1, what=f"{name} shown")
    return nvim.funcs.bufwinid(name)


def log_has(nvim, needle: str, name: str = LOG) -> list[str]:
    return wait_for(lambda: [h for h in headers(nvim, name) if needle in h], timeout=10, what=needle)


def test_scripted_session_one_line_per_entry_with_folded_json(nvim):
    setup(nvim, level="trace")
    turn(nvim, "hello log")
    nvim.command("Ai log")
    expected = ["lifecycle: spawned pid", "→ request initialize #0", "← response initialize #0",
                "lifecycle: initialized acp-nvim-demo 0.1.0", "→ request session/new #1",
                "← response session/new #1", '→ request session/prompt #2 "hello log"',
                "← notification session/update agent_thought_chunk",
                "← notification session/update agent_message_chunk",
                "← response session/prompt #2"]
    # the log buffer renders in batches, so wait for every entry the test reads, not only the first
    lines = wait_for(lambda: all(any(want in line for line in headers(nvim)) for want in expected) and headers(nvim),
                     timeout=30, what="every entry of the turn in the log buffer")
    positions = [next(i for i, line in enumerate(lines) if want in line) for want in expected]
    assert positions == sorted(positions), lines
    prompt_response = next(line for line in lines if "← response session/prompt #2" in line)
    assert re.search(r"#2 \d+(\.\d+)?ms end_turn$", prompt_response), prompt_response
    buf = nvim.funcs.bufnr(LOG)
    assert nvim.api.get_option_value("buftype", {"buf": buf}) == "nofile"
    assert nvim.api.get_option_value("modifiable", {"buf": buf}) is False
    # the full JSON sits under each wire entry, pretty-printed and folded
    text = buffer_text(nvim, LOG).split("\n")
    row = next(i for i, line in enumerate(text) if "→ request session/prompt" in line)
    body = []
    for line in text[row + 1:]:
        if not line.startswith("  "):
            break
        body.append(line)
    assert json.loads("\n".join(body))["params"]["prompt"][0]["text"] == "hello log"
    nvim.current.window = nvim.funcs.win_getid(nvim.funcs.bufwinnr(buf))
    assert nvim.funcs.foldclosed(row + 2) == row + 2 and nvim.funcs.foldclosedend(row + 2) == row + 1 + len(body)
    assert nvim.funcs.foldclosed(row + 1) == -1, "the entry line itself is not folded"


def test_tail_follows_on_last_line_and_stays_put_when_scrolled_up(nvim):
    setup(nvim, level="trace")
    turn(nvim, "hello")
    win = open_log(nvim)
    buf = nvim.funcs.bufnr(LOG)
    assert nvim.funcs.win_getid() == win, "the log window has the focus"
    wait_for(lambda: nvim.api.win_get_cursor(win)[0] == nvim.api.buf_line_count(buf))
    turn(nvim, "stderr 20", count=2)
    log_has(nvim, "← response session/prompt #3")
    wait_for(lambda: nvim.api.win_get_cursor(win)[0] == nvim.api.buf_line_count(buf),
             what="the cursor to follow the tail")
    # scroll up: the cursor (and the entry under it) stays while entries arrive
    nvim.api.win_set_cursor(win, [3, 0])
    anchor = nvim.api.buf_get_lines(buf, 2, 3, False)[0]
    before = nvim.api.buf_line_count(buf)
    turn(nvim, "stderr 20", count=3)
    log_has(nvim, "← response session/prompt #4")
    assert nvim.api.buf_line_count(buf) > before
    row = nvim.api.win_get_cursor(win)[0]
    assert row == 3 and nvim.api.buf_get_lines(buf, row - 1, row, False)[0] == anchor


def test_buffer_is_trimmed_with_the_ring(nvim):
    setup(nvim, level="trace", max_entries=25)
    turn(nvim, "flood 300")
    nvim.command("Ai log")
    log_has(nvim, "← response session/prompt #2")
    assert len(headers(nvim)) == 25
    assert not any("lifecycle: spawned" in h for h in headers(nvim)), "the oldest entries are gone"
    turn(nvim, "flood 200", count=2)
    last = log_has(nvim, "← response session/prompt #3")
    lines = headers(nvim)
    assert len(lines) == 25 and lines[-1] == last[0]
    assert buffer_text(nvim, LOG).count('"jsonrpc"') == 25, "one JSON body per kept entry, nothing more"


def test_a_long_log_shows_its_newest_page_first_then_every_entry_in_order_once(nvim):
    from acp_nvim.nvim.log.log_view import PAGE_LINES

    setup(nvim, level="trace", max_entries=8000, max_bytes=64 << 20)
    turn(nvim, "flood 8000")
    nvim.exec_lua(call_counter)
    win = open_log(nvim)
    log_has(nvim, "← response session/prompt #2")
    assert len(headers(nvim)) < 8000, "the newest page first"
    assert any("older entries in the ring: scroll up" in line for line in virt_lines(nvim, LOG))
    while len(headers(nvim)) < 8000:  # the user scrolls up: a page of older entries each time
        shown = len(headers(nvim))
        nvim.api.set_current_win(win)
        nvim.command("normal! gg")
        wait_for(lambda n=shown: len(headers(nvim)) > n, timeout=10, what="a page of older entries")
    assert not any("older entries" in line for line in virt_lines(nvim, LOG))
    numbers = chunk_numbers(buffer_text(nvim, LOG))
    assert not (problem := out_of_order(numbers, 8000)), f"in order, each once: {problem}"
    assert len(numbers) > 7000
    assert headers(nvim)[-1].endswith("end_turn")
    sizes = nvim.exec_lua("return _G.acp_log_calls")
    assert len(sizes) > 3 and max(sizes) <= PAGE_LINES, "no call carries more than a page of lines"
    nvim.command("normal! G")
    # more than a page at once while the buffer is open. Once the new flood shows, Neovim is held
    # busy, so the view's one call in flight waits and the rest of the flood piles up past a page.
    # Left to itself, a loaded machine may deliver the flood a part at a time, and the view then
    # simply tails it; held busy before the prompt is sent, the host may wait on Neovim to send it.
    nvim.command("Ai send flood 6000")
    wait_for(lambda: chunk_numbers(buffer_text(nvim, LOG))[-1] != 7999, timeout=20, what="the new flood")
    nvim.exec_lua("vim.uv.sleep(3000)")
    wait_for(lambda: buffer_text(nvim, CHAT).count("turn ended") >= 2, timeout=30, what="the flood's turn to end")
    last = log_has(nvim, "← response session/prompt #3")
    assert headers(nvim)[-1] == last[0]
    numbers = chunk_numbers(buffer_text(nvim, LOG))
    assert not (problem := out_of_order(numbers, 6000)), f"the buffer started over from the newest page: {problem}"


def out_of_order(numbers: list[int], end: int) -> str:
    """Empty when ``numbers`` run ``…, end - 2, end - 1``, each once, else a short summary (pytest's own
    diff of two long lists takes minutes)."""
    if numbers == list(range(end - len(numbers), end)):
        return ""
    jumps = [(a, b) for a, b in itertools.pairwise(numbers) if b != a + 1]
    return f"{len(numbers)} numbers, {numbers[:3]} … {numbers[-3:]}, jumps {jumps[:5]}"


def chunk_numbers(text: str) -> list[int]:
    """The demo agent's flood chunks in a log buffer's bodies (``chunk00042``), in buffer order."""
    return [int(n) for n in re.findall(r'"text":"chunk(\d{5})"', text)]


call_counter = """
_G.acp_log_calls = {}
local log = require('acp_nvim.log')
for _, name in ipairs({ 'open', 'append', 'prepend' }) do
  local original = log[name]
  log[name] = function(key, a, b, ...)
    local items = name == 'open' and a or b
    if type(items) == 'table' then
      local lines = 0
      for _, item in ipairs(items) do lines = lines + 1 + #item[3] end
      table.insert(_G.acp_log_calls, lines)
    end
    return original(key, a, b, ...)
  end
end
"""


def test_level_filtering_default_and_per_session_override(nvim):
    setup(nvim)
    turn(nvim, "hello")
    nvim.command("Ai log")
    log_has(nvim, "← response session/prompt #2")
    assert not [h for h in headers(nvim) if "agent_message_chunk" in h], "chunks are trace, the default is debug"
    nvim.command("Ai log level trace")
    turn(nvim, "again", count=2)
    log_has(nvim, "agent_message_chunk")
    nvim.command("Ai log level warn")
    turn(nvim, "garbage", count=3)
    log_has(nvim, "stdout (not JSON-RPC)")
    assert not [h for h in headers(nvim) if "#4" in h], "debug traffic of the third turn is filtered out"
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.command("Ai log level")
    wait_for(lambda: any("demo/1: log level warn" in n for n in nvim.exec_lua("return _G.acp_test_notes")))
    nvim.command("Ai log level loud")
    wait_for(lambda: any("unknown log level 'loud'" in n for n in nvim.exec_lua("return _G.acp_test_notes")))


def test_stderr_lines_interleave_with_the_wire(nvim):
    setup(nvim, level="trace")
    turn(nvim, "stderr 4")
    nvim.command("Ai log")
    log_has(nvim, "← response session/prompt #2")
    lines = headers(nvim)
    stderr = [i for i, h in enumerate(lines) if "stderr: demo agent: chatter line" in h]
    chunks = [i for i, h in enumerate(lines) if '"line ' in h and "agent_message_chunk" in h]
    request = next(i for i, h in enumerate(lines) if "→ request session/prompt #2" in h)
    assert len(stderr) == 4 and len(chunks) >= 4
    # one timeline in arrival order (stderr is another pipe: it may trail the turn's last message)
    assert request < min(stderr), "the agent wrote them while answering the prompt"
    assert [lines[i].split("stderr: ")[1] for i in stderr] == [f"demo agent: chatter line {n}" for n in range(4)]
    assert [h[:12] for h in lines] == sorted(h[:12] for h in lines)
    assert all(" INF ← stderr: " in lines[i] for i in stderr)


def test_stdout_noise_is_logged_and_shown_and_the_turn_goes_on(nvim):
    nvim.exec_lua(CAPTURE_NOTIFY)
    setup(nvim)
    text = turn(nvim, "garbage")
    assert "this turn carries on" in text
    nvim.command("Ai log")
    (line,) = log_has(nvim, "stdout (not JSON-RPC): Open https://example.invalid/oauth")
    assert " WRN ← " in line
    assert any("https://example.invalid/oauth" in n for n in nvim.exec_lua("return _G.acp_test_notes"))


def test_secrets_are_redacted_in_ring_buffer_and_export(nvim, tmp_path):
    secret, api_key = "s3cr3t-value-123", "sk-ant-api03-" + "Q" * 24
    agent = {"command": sys.executable, "args": ["-m", "acp_nvim.demo_agent"],
             "env": {"PYTHONPATH": PYTHON_DIR, "DEMO_TOKEN": secret}}
    nvim.exec_lua("require('acp_nvim').setup({ agents = { demo = ... }, log = { level = 'trace' } })", agent)
    turn(nvim, f"tell me about {secret} and {api_key}")
    nvim.command("Ai log")
    log_has(nvim, "← response session/prompt #2")
    text = buffer_text(nvim, LOG)
    assert "[redacted:$DEMO_TOKEN]" in text and "[redacted]" in text
    target = tmp_path / "export.jsonl"
    nvim.command(f"Ai log export {target}")
    wait_for(target.exists)
    exported = wait_for(lambda: target.read_text().endswith("\n") and target.read_text())
    for blob in (text, exported):
        assert secret not in blob and api_key not in blob
    for line in exported.splitlines():
        json.loads(line)


def test_log_of_a_named_session_and_errors(nvim):
    nvim.exec_lua(CAPTURE_NOTIFY)
    setup(nvim)
    turn(nvim, "hello")
    nvim.command("Ai new")
    wait_for(lambda: nvim.funcs.bufnr("acp://chat/demo/2") != -1)
    open_log(nvim, "demo/1")
    log_has(nvim, "← response session/prompt #2")
    nvim.command("Ai log demo/9")
    wait_for(lambda: any("no session 'demo/9'" in n for n in nvim.exec_lua("return _G.acp_test_notes")))
    assert "log" in nvim.exec_lua("return require('acp_nvim').complete('', 'Ai ', 3)")
    complete = "return require('acp_nvim').complete(...)"
    assert {"export", "level", "demo/1", "demo/2"} <= set(nvim.exec_lua(complete, "", "Ai log ", 7))
    assert nvim.exec_lua(complete, "le", "Ai log le", 9) == ["level"]
    assert nvim.exec_lua(complete, "", "Ai log level ", 13) == ["trace", "debug", "info", "warn", "error"]


@pytest.mark.parametrize(("opts", "message"), [
    ("{ max_entries = -1 }", "log.max_entries: expected a whole number >= 0"),
    ("{ max_bytes = 1.5 }", "log.max_bytes: expected a whole number of bytes >= 0"),
    ("{ max_entries = 'many' }", "log.max_entries: expected number, got string"),
])
def test_log_options_are_validated(nvim, opts, message):
    """When first used: setup() only records its options (nothing loads at startup). A bad value is
    reported, naming its path, and the key keeps its default (reading the configuration never raises)."""
    log, problems = nvim.exec_lua(f"""local m = require('acp_nvim'); m.setup({{ log = {opts} }})
        return {{ m.config.log, require('acp_nvim.config.options').problems }}""")
    assert len(problems) == 1 and message in problems[0] and problems[0].endswith("; using the default")
    assert log["max_entries"] == 5000 and log["max_bytes"] == 8 * 1024 * 1024


def test_reopen_after_close_and_after_wipeout(nvim):
    setup(nvim)
    turn(nvim, "hello")
    win = open_log(nvim)
    log_has(nvim, "← response session/prompt #2")
    nvim.api.win_close(win, True)
    turn(nvim, "again", count=2)
    open_log(nvim)
    log_has(nvim, "← response session/prompt #3")
    nvim.command(f"bwipeout! {nvim.funcs.bufnr(LOG)}")
    turn(nvim, "third", count=3)
    assert nvim.funcs.bufnr(LOG) == -1
    open_log(nvim)
    lines = log_has(nvim, "← response session/prompt #4")
    assert len([h for h in headers(nvim) if "→ request session/prompt" in h]) == 3, lines
    # a new log buffer draws its older pages one per update, until the session's spawn is on top
    wait_for(lambda: "lifecycle: spawned pid" in headers(nvim)[0], timeout=30, what="the spawn on top", nvim=nvim)


def test_the_export_is_private_and_never_follows_a_symlink(nvim, tmp_path):
    import os
    import stat

    nvim.exec_lua(CAPTURE_NOTIFY)
    setup(nvim)
    turn(nvim, "hello")
    target = tmp_path / "export.jsonl"
    target.write_text("old\n")
    target.chmod(0o644)
    nvim.command(f"Ai log export {target}")
    wait_for(lambda: target.read_text().startswith("{"), what="the export to replace the old file")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [name for name in os.listdir(tmp_path) if name.endswith(".tmp")] == [], "no temp file left"

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    nvim.command(f"Ai log export {link}")
    wait_for(lambda: any("is a symbolic link" in n for n in nvim.exec_lua("return _G.acp_test_notes")),
             what="the refusal")
    assert victim.read_text() == "keep me\n" and link.is_symlink()
