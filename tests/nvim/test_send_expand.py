""":Ai send expands `%`, `#` and `#n` as :edit does, relative to the buffer it ran from."""

from __future__ import annotations

import json
import re

import pytest

from helpers import buffer_text, capture_notes, wait_for

pytestmark = pytest.mark.timeout(60)

EXPAND = "return { require('acp_nvim.host.cmdline').expand(...) }"


def expand(nvim, text: str) -> list:
    return nvim.exec_lua(EXPAND, text)


@pytest.fixture
def two_files(nvim, workspace):
    """``main.py`` current, ``lib/util.lua`` alternate; returns their absolute paths."""
    (workspace / "lib").mkdir()
    util, main = workspace / "lib" / "util.lua", workspace / "main.py"
    util.write_text("return 1\n")
    main.write_text("print(1)\n")
    nvim.command("edit lib/util.lua")
    nvim.command("edit main.py")
    return main, util


def test_percent_hash_and_modifiers(nvim, workspace, two_files):
    main, util = two_files
    util_buf = nvim.funcs.bufnr("lib/util.lua")
    assert expand(nvim, "edit %:p") == [f"edit {main}"]
    assert expand(nvim, "read %") == ["read main.py"]
    assert expand(nvim, "compare % with #") == ["compare main.py with lib/util.lua"]
    assert expand(nvim, f"see #{util_buf}:t") == ["see util.lua"]
    assert expand(nvim, "in #:h and %:r and %:e") == ["in lib and main and py"]
    assert expand(nvim, "#:p:h:t") == ["lib"]
    assert expand(nvim, "%:~:.") == [nvim.funcs.expand("%:~:.")]
    assert expand(nvim, "what is %:p?") == [f"what is {main}?"]
    assert expand(nvim, "look at @% and @#:p, please") == [f"look at @main.py and @{util}, please"]


def test_prose_and_escapes_stay_as_typed(nvim, two_files):
    for text in ("make it 50% faster", "#include <stdio.h>", "a%b", "100%", "%d items", "email a@b.c", "%:x"):
        assert expand(nvim, text) == [text]
    assert expand(nvim, r"a literal \% and \#:p and @\%") == ["a literal % and #:p and @%"]
    assert expand(nvim, r"keep \this") == [r"keep \this"]
    assert expand(nvim, "  spaced\tout  %  ") == ["  spaced\tout  main.py  "]


def test_a_special_that_names_no_file_is_a_clear_error(nvim):
    assert expand(nvim, "explain %") == [None, "`%` names no file: the current buffer has no name "
                                               "(write \\% for a literal %)"]
    assert "no alternate file" in expand(nvim, "and #")[1]
    assert "buffer 99 does not exist" in expand(nvim, "issue #99")[1]


def test_nothing_is_sent_when_expansion_fails(nvim):
    capture_notes(nvim)
    nvim.command("Ai send explain %:p")
    assert nvim.exec_lua("return _G.notes") == [
        "[acp.nvim] `%` names no file: the current buffer has no name (write \\% for a literal %)"]
    assert not nvim.call("remote#host#IsRunning", "python3"), "nothing reached the host"


def test_send_expands_relative_to_the_buffer_it_ran_from(nvim, workspace, two_files):
    main, util = two_files
    nvim.command("Ai send echo %:p and @#")
    chat = "acp://chat/demo/1"
    text = wait_for(lambda: "turn ended" in buffer_text(nvim, chat) and buffer_text(nvim, chat), timeout=30,
                    what="the echo turn")
    assert f"## You\necho {main} and @lib/util.lua" in text
    blocks = json.loads(re.findall(r"```json\n(.*?)\n```", text, re.S)[-1])
    assert blocks[0] == {"type": "text", "text": f"echo {main} and @lib/util.lua"}
    assert blocks[1]["resource"]["uri"] == util.resolve().as_uri(), "@# attaches the alternate file"
