"""Examples that work as typed: every `:Ai ...` example and every Lua snippet of the README, the
demo banner (scripts/demo_init.lua) and `:help acp_nvim` runs exactly as written, in a real Neovim
against the demo agent, in the demo's world (hello.py open), with no error and the effect it promises.

Command references are not examples: the generated command tables and the vimdoc lines that
define a command are left out, and so are forms with placeholders (`[agent]`, `{text}`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from acp_nvim.nvim.commands.subcommand_docs import README_BEGIN, README_END, VIMDOC_BEGIN
from conftest import ROOT
from helpers import answer_keys, buffer_text, wait_for
from helpers.demo import demo_script

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
PLACEHOLDER = re.compile(r"[\[{<]")


@dataclass(frozen=True)
class Example:
    where: str
    text: str

    def __str__(self) -> str:
        return f"{self.text!r} ({self.where})"


# -- collecting ------------------------------------------------------------------------

def _commands_in(text: str) -> list[str]:
    spans = re.findall(r"`(:Ai(?: [^`\n]*)?)`", text)
    return [s for s in spans if not PLACEHOLDER.search(s)]


def readme_examples() -> tuple[list[Example], list[Example]]:
    text = (ROOT / "README.md").read_text()
    head, _, rest = text.partition(README_BEGIN)
    prose = head + rest.partition(README_END)[2]
    commands = [Example("README.md", c) for c in _commands_in(prose)]
    lua = [Example("README.md", block) for block in re.findall(r"```lua\n(.*?)```", text, re.S)]
    return commands, lua


def banner_examples() -> list[Example]:
    text = (ROOT / "scripts" / "demo_init.lua").read_text()
    examples = re.search(r"local EXAMPLES = \{(.*?)\}", text, re.S)
    assert examples, "scripts/demo_init.lua keeps the banner's examples in EXAMPLES"
    return [Example("demo banner", c) for c in re.findall(r"'(:Ai[^']*)'", examples.group(1))]


def help_examples() -> tuple[list[Example], list[Example]]:
    lines = (ROOT / "doc" / "acp_nvim.txt").read_text().split("\n")
    commands: list[Example] = []
    lua: list[Example] = []
    for number, language, block in _help_blocks(lines):
        where = f"doc/acp_nvim.txt:{number}"
        if language == "lua":
            lua.append(Example(where, _dedent("\n".join(block))))
        elif language is None:  # a prose line (the generated index is a reference, not examples)
            commands += [Example(where, c) for c in _commands_in(block[0])]
        else:
            commands += [Example(where, c.strip()) for c in block
                         if c.strip().startswith(":Ai") and not PLACEHOLDER.search(c)]
    return commands, lua


def _help_blocks(lines: list[str]) -> Iterator[tuple[int, str | None, list[str]]]:
    """(line number, language, lines): code blocks (``>lua`` ... ``<``; language '' or 'vim' or 'lua')
    and single prose lines (language None), leaving out the generated subcommand index."""
    number, in_index = 0, False
    while number < len(lines):
        line = lines[number]
        number += 1
        in_index = VIMDOC_BEGIN in line or (in_index and bool(line.strip()))
        if not in_index:
            yield number, None, [line]
        opened = re.search(r">(lua|vim)?$", line)
        if opened:
            start, block = number + 1, []
            while number < len(lines) and not (lines[number].startswith("<") or lines[number][:1].strip()):
                block.append(lines[number])
                number += 1
            yield start, opened.group(1) or "", block


def _dedent(code: str) -> str:
    rows = [r for r in code.split("\n") if r.strip()]
    indent = min(len(r) - len(r.lstrip()) for r in rows)
    return "\n".join(r[indent:] for r in code.split("\n")).strip("\n")


def all_examples() -> tuple[list[Example], list[Example]]:
    readme_commands, readme_lua = readme_examples()
    help_commands, help_lua = help_examples()
    return [*readme_commands, *banner_examples(), *help_commands], [*readme_lua, *help_lua]


COMMANDS, SNIPPETS = all_examples()


# -- the demo's world ------------------------------------------------------------------

DEMO = demo_script()
CAPTURE = """
_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level or 2 }) end
"""


@dataclass
class World:
    nvim: object
    workspace: Path
    sample: Path

    def notes(self) -> list[str]:
        return [n["msg"] for n in self.nvim.exec_lua("return _G.notes")]

    def errors(self) -> list[str]:
        return [n["msg"] for n in self.nvim.exec_lua("return _G.notes") if n["level"] >= 4]

    def chat(self, name: str = CHAT) -> str:
        return buffer_text(self.nvim, name)

    def wait_chat(self, text: str, name: str = CHAT) -> str:
        return wait_for(lambda: text in self.chat(name) and self.chat(name), timeout=30, what=f"{text!r} in {name}")

    def turns(self, count: int, name: str = CHAT) -> str:
        return wait_for(lambda: self.chat(name).count("── turn ended") >= count and self.chat(name), timeout=30,
                        what=f"{count} turn(s) in {name}")

    def state(self, key: str = "demo/1") -> dict:
        return self.nvim.exec_lua("return require('acp_nvim.state').sessions[...] or vim.empty_dict()", key)

    def idle(self, key: str = "demo/1") -> None:
        wait_for(lambda: self.state(key).get("state") == "idle", timeout=30, what=f"{key} idle")


@pytest.fixture
def world(nvim, workspace) -> World:
    """As in `make demo`: hello.py open in the workspace (with notes.md as the alternate file)."""
    (workspace / "notes.md").write_text("# notes\n")
    sample = workspace / DEMO.SAMPLE_NAME
    sample.write_text(DEMO.SAMPLE)
    nvim.command("edit notes.md")
    nvim.command(f"edit {DEMO.SAMPLE_NAME}")
    nvim.exec_lua(CAPTURE)
    return World(nvim, workspace, sample)


# -- what each :Ai example promises ----------------------------------------------------

def _chat_opens(w: World) -> None:
    # The first `:Ai` command of a test starts the Python host and a session before the window
    # opens; on a loaded machine that takes seconds, as the other waits here allow.
    wait_for(lambda: w.nvim.api.buf_get_name(0) == CHAT, timeout=30, what="the chat window")
    w.idle()


def _hello(w: World) -> None:
    assert "You said: hello" in w.turns(1)


def _plan(w: World) -> None:
    assert "- [x] Read the relevant code\n- [x] Make the change\n- [x] Run the tests" in w.turns(1)


def _edit_current_file(w: World) -> None:
    w.wait_chat(f"## You\nedit {w.sample}")
    wait_for(lambda: w.nvim.exec_lua("return #require('acp_nvim.review').pending() > 0"), timeout=30,
             what="the review of hello.py")
    answer_keys(w.nvim, "ga")
    w.turns(1)
    assert w.sample.read_text().splitlines()[0] == "def greet(name): # edited by demo"


def _shell(w: World) -> None:
    def prompt() -> str:
        return w.nvim.exec_lua("""local win = require('acp_nvim.question.permission').prompt.win
            if not (win and vim.api.nvim_win_is_valid(win)) then return '' end
            return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\\n')""")
    assert "$ ls" in wait_for(prompt, timeout=30, what="the permission prompt")
    answer_keys(w.nvim, "r")
    w.turns(1)


def _compare(w: World) -> None:
    assert "## You\ncompare hello.py with notes.md" in w.turns(1)


def _mention_current_file(w: World) -> None:
    assert "## You\nexplain @hello.py\n— attached: hello.py" in w.turns(1)


def _log_level_trace(w: World) -> None:
    wait_for(lambda: any("demo/1: log level trace" in n for n in w.notes()), timeout=10, what="the new level")


def _start_session(w: World) -> None:
    w.nvim.command("Ai")
    w.idle()


def _export_log(w: World) -> None:
    target = w.workspace / "bug.jsonl"
    wait_for(lambda: target.exists() and target.read_text().endswith("\n"), timeout=10, what="bug.jsonl")
    assert '"session": "demo/1"' in target.read_text().split("\n", 1)[0]


def _session_with_a_turn(w: World) -> None:
    w.nvim.command("Ai send hello")
    w.turns(1)


def _replay_session(w: World) -> None:
    """The REPLAY workflow of :help acp_nvim-log-replay, its snippet included, as written."""
    w.nvim.command("Ai log level trace")
    w.nvim.command("Ai send hello")
    w.turns(1)
    w.nvim.command("Ai log export bug.jsonl")
    _export_log(w)
    w.nvim.exec_lua(_snippet_containing("acp_nvim.replay"))


def _replayed(w: World) -> None:
    w.idle("replay/1")
    w.nvim.command("Ai send hello")
    assert "You said: hello" in w.turns(1, "acp://chat/replay/1")


def _checkpoints_listed(w: World) -> None:
    listing = wait_for(lambda: buffer_text(w.nvim, "acp://checkpoints/demo/1"), timeout=10, what="the list")
    assert listing.splitlines()[3].startswith("  1 ") and "hello" in listing


def _rewound(w: World) -> None:
    assert "── rewound to before turn 1 ──" in w.wait_chat("the conversation continues in a new session")
    w.idle()


def _session_rewound(w: World) -> None:
    _session_with_a_turn(w)
    w.nvim.command("Ai rewind")
    _rewound(w)


def _rewind_undone(w: World) -> None:
    w.wait_chat("── undid the rewind to before turn 1 ──")


def _board(w: World) -> None:
    wait_for(lambda: w.nvim.api.buf_get_name(0) == "acp://board", timeout=10, what="the board")
    assert "acp.nvim · 0 sessions" in buffer_text(w.nvim, "acp://board")


def _next_waiting(w: World) -> None:
    wait_for(lambda: "[acp.nvim] no session is waiting for you" in w.notes(), timeout=10, what="the message")


def _restarted(w: World) -> None:
    w.wait_chat("agent restarted")
    w.idle()


def _nothing_pending(w: World) -> None:
    wait_for(lambda: "[acp.nvim] no permission request is pending" in w.notes(), what="the message")


def _media_refused(w: World) -> None:
    """A blob the demo sends wrong is refused on its line."""
    assert ": not saved" in w.turns(1)


@dataclass(frozen=True)
class Promise:
    check: Callable[[World], None]
    before: Callable[[World], None] | None = None


PROMISES: dict[str, Promise] = {
    ":Ai": Promise(_chat_opens),
    ":Ai open": Promise(_chat_opens),
    ":Ai send hello": Promise(_hello),
    ":Ai send plan": Promise(_plan),
    ":Ai send edit %:p": Promise(_edit_current_file),
    ":Ai send shell ls": Promise(_shell),
    ":Ai send compare % with #": Promise(_compare),
    ":Ai send explain @%": Promise(_mention_current_file),
    ":Ai log level trace": Promise(_log_level_trace, before=_start_session),
    ":Ai log export bug.jsonl": Promise(_export_log, before=_session_with_a_turn),
    ":Ai new replay": Promise(_replayed, before=_replay_session),
    ":Ai checkpoints": Promise(_checkpoints_listed, before=_session_with_a_turn),
    ":Ai rewind": Promise(_rewound, before=_session_with_a_turn),
    ":Ai rewind undo": Promise(_rewind_undone, before=_session_rewound),
    ":Ai board": Promise(_board),
    ":Ai next": Promise(_next_waiting),
    ":Ai restart": Promise(_restarted, before=_start_session),
    ":Ai permissions": Promise(_nothing_pending),
    ":Ai send media-bad": Promise(_media_refused),
}


def _snippet_containing(needle: str) -> str:
    return next(s.text for s in SNIPPETS if needle in s.text)


def test_every_command_example_has_a_promise():
    found = {e.text for e in COMMANDS}
    assert found - PROMISES.keys() == set(), "examples without a check: add them to PROMISES"
    assert PROMISES.keys() - found == set(), "PROMISES for examples no document has any more"


@pytest.mark.parametrize("example", sorted({e.text: e for e in COMMANDS}.values(), key=lambda e: e.text), ids=str)
def test_command_example_works_as_typed(world, example):
    promise = PROMISES[example.text]
    if promise.before is not None:
        promise.before(world)
    world.nvim.command(example.text[1:])
    promise.check(world)
    assert world.errors() == [], f"{example}: error messages"


# -- Lua snippets ----------------------------------------------------------------------

RUN_SNIPPET = """
local code = ...
local acp = require('acp_nvim')
local real, captured = acp.setup, {}
acp.setup = function(opts) table.insert(captured, vim.deepcopy(opts or {})) return real(opts) end
local function run()
  local first = code:match('^%s*([%w_]+)%s*=')
  if first and require('acp_nvim.config').defaults[first] ~= nil then  -- setup() options
    return acp.setup(assert(loadstring('return { ' .. code .. ' }'))())
  end
  local chunk = loadstring(code)
  if chunk then return chunk() end
  local value = assert(loadstring('return ' .. code))()  -- a plugin spec (lazy.nvim)
  assert(type(value) == 'table' and type(value.config) == 'function', 'neither a chunk nor a plugin spec')
  return value.config()
end
local ok, err = pcall(run)
acp.setup = real
return { ok = ok, err = tostring(err), captured = captured }
"""

SETUP_DIFFERENCES = """
local opts, base = ...
local config = base == 'defaults' and require('acp_nvim.config').build(nil) or require('acp_nvim').config
local out = {}
local function walk(value, path)
  if type(value) == 'table' and not vim.islist(value) and next(value) ~= nil then
    for k, v in pairs(value) do walk(v, vim.list_extend(vim.list_slice(path), { k })) end
  elseif not vim.deep_equal(value, vim.tbl_get(config, unpack(path))) then
    table.insert(out, table.concat(path, '.'))
  end
end
walk(opts, {})
return out
"""


LUALINE_STAND_IN = """package.preload['lualine'] = function()
  return { setup = function(opts) _G.lualine_setup = opts end }
end"""


def run_snippet(w: World, snippet: Example) -> list[dict]:
    if "require('lualine')" in snippet.text:  # lualine is not installed here: a stand-in takes its setup()
        w.nvim.exec_lua(LUALINE_STAND_IN)
    result = w.nvim.exec_lua(RUN_SNIPPET, snippet.text)
    assert result["ok"], f"{snippet}: {result['err']}"
    assert w.errors() == [], f"{snippet}: error messages"
    return result["captured"]


def _check_statusline(w: World) -> None:
    w.nvim.command("Ai")
    w.idle()
    shown = w.nvim.api.eval_statusline(w.nvim.exec_lua("return vim.o.statusline"), {})["str"]
    assert "demo/1 · idle" in shown, shown


def _check_turn_end_event(w: World) -> None:
    w.nvim.command("Ai send hello")
    wait_for(lambda: "demo/1 finished: end_turn" in w.notes(), timeout=30, what="the example's message")


def _check_replay(w: World) -> None:
    _replay_session(w)
    w.nvim.command("Ai new replay")
    _replayed(w)


def _check_needs_you_event(w: World) -> None:
    w.nvim.command(f"Ai send edit {w.sample}")
    wait_for(lambda: "demo/1 waits on review" in w.notes(), timeout=30, what="the example's message")
    answer_keys(w.nvim, "gr")
    w.turns(1)


def _check_plug_mappings(w: World) -> None:
    """The snippet's keys lead to the <Plug> mappings it names, and those exist."""
    for lhs, plug in (("<leader>ar", "<Plug>(AcpNvimRestart)"), ("<leader>as", "<Plug>(AcpNvimSend)")):
        assert w.nvim.funcs.maparg(lhs, "n") == plug
        assert w.nvim.funcs.maparg(plug, "n") != "", f"{plug} is not defined"


def _check_vim_pack(w: World) -> None:
    """Neovim 0.12's vim.pack install: on the 0.11 the tests run, the snippet does nothing (as it says)."""
    assert w.nvim.exec_lua("return vim.pack == nil"), "a Neovim with vim.pack: this check must run the install"
    assert w.errors() == []


def _check_lualine(w: World) -> None:
    """The component shows the session's state, and the snippet's keys toggle the column and send."""
    w.nvim.command("Ai")
    w.idle()
    shown = w.nvim.exec_lua("local c = _G.lualine_setup.sections.lualine_x[1]; return c.cond() and c[1]()")
    assert "demo/1 · idle" in shown, shown
    w.nvim.exec_lua("vim.fn.win_gotoid(vim.fn.bufwinid('hello.py'))")
    w.nvim.input("\\ae")  # <leader>ae: the current line of hello.py goes with 'explain this'
    w.wait_chat("explain this")
    w.turns(1)


SNIPPET_CHECKS: dict[str, Callable[[World], None]] = {
    "require('lualine')": _check_lualine,
    "vim.pack.add": _check_vim_pack,
    "<Plug>(AcpNvimRestart)": _check_plug_mappings,
    "vim.o.statusline": _check_statusline,
    "AcpNvimTurnEnd": _check_turn_end_event,
    "AcpNvimNeedsYou": _check_needs_you_event,
}


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.where)
def test_lua_snippet_works_as_written(world, snippet):
    if "acp_nvim.replay" in snippet.text:
        _check_replay(world)  # the snippet needs its export first; the check runs it as written
        return
    captured = run_snippet(world, snippet)
    for opts in captured:
        assert world.nvim.exec_lua(SETUP_DIFFERENCES, opts, "config") == [], f"{snippet}: options not taken"
    if "Defaults:" in _text_before(snippet):
        assert world.nvim.exec_lua(SETUP_DIFFERENCES, captured[0], "defaults") == [], \
            f"{snippet}: these are not the defaults"
    checks = [check for needle, check in SNIPPET_CHECKS.items() if needle in snippet.text]
    assert captured or checks, f"{snippet}: calls no setup() and has no check in SNIPPET_CHECKS"
    for check in checks:
        check(world)
    if "default_agent" in snippet.text:
        agent = re.search(r"default_agent = ['\"](\w+)['\"]", snippet.text)
        assert agent and world.nvim.exec_lua("return require('acp_nvim').config.default_agent") == agent.group(1)


def _text_before(snippet: Example) -> str:
    if not snippet.where.startswith("doc/"):
        return ""
    number = int(snippet.where.rsplit(":", 1)[1])
    return (ROOT / "doc" / "acp_nvim.txt").read_text().split("\n")[number - 2]


def test_examples_were_found():
    """The collectors see the examples the documents are known to have."""
    texts = {e.text for e in COMMANDS}
    assert {":Ai send edit %:p", ":Ai send shell ls", ":Ai send explain @%", ":Ai new replay"} <= texts
    wheres = {s.where.split(":")[0] for s in SNIPPETS}
    assert wheres == {"README.md", "doc/acp_nvim.txt"} and len(SNIPPETS) >= 10
