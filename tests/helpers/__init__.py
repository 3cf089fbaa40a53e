"""Shared test helpers. Polling: wait with a deadline, never sleep-and-hope.

The only polling code of the tests: ``wait_for`` (blocking, for tests driving Neovim) and
``async_wait_for`` (its asyncio twin, for core tests on the event loop). ``helpers.lua`` holds the
Lua stubs (``vim.notify``, ``vim.ui.select``), ``helpers.core`` the core tests' session helpers
(import it only where tests/unit is on the path: unit and e2e tests).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from helpers.lua import NOTIFY, SELECT, capture_notes, notes, notify_stub

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """``wait_for``'s deadline passed before its probe returned a truthy value."""


WAIT_FLOOR = float(os.environ.get("ACP_TEST_WAIT_FLOOR", "90"))
"""No wait gives up sooner than this (s). A test's own ``timeout=`` says how long the thing should
take on an idle machine; a loaded CI machine may take many times that, and a wait that gives up
early is a flake, not a finding. A passing test never waits longer for it: the probe ends the wait."""


def _deadline(timeout: float | None) -> float:
    return time.monotonic() + max(timeout or 0.0, WAIT_FLOOR)


def wait_for(probe: Callable[[], T], timeout: float | None = None, interval: float = 0.02, what: str = "",
             nvim: Any = None) -> T:
    """Call ``probe`` until it returns a truthy value. After the deadline (``timeout``, never less than
    ``WAIT_FLOOR``) fail with its last value and, given ``nvim``, what the editor shows then."""
    deadline = _deadline(timeout)
    last: T | None = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    shown = f"\n{describe(nvim)}" if nvim is not None else ""
    raise WaitTimeout(f"timed out waiting for {what or probe}; last value: {last!r}{shown}")


async def async_wait_for(probe: Callable[[], T], timeout: float | None = None, interval: float = 0.01,
                         what: str = "") -> T:
    """``wait_for`` on the event loop: other tasks run while it waits."""
    deadline = _deadline(timeout)
    last: T | None = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(interval)
    raise WaitTimeout(f"timed out waiting for {what or probe}; last value: {last!r}")


DESCRIBE_LUA = r"""
local out = {}
local function add(s) out[#out + 1] = s end
add('mode: ' .. vim.api.nvim_get_mode().mode .. '  cwd: ' .. vim.fn.getcwd())
for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local buf = vim.api.nvim_win_get_buf(win)
    add(('tab %d win %d (%dx%d) buf %d %s'):format(vim.api.nvim_tabpage_get_number(tab), win,
      vim.api.nvim_win_get_width(win), vim.api.nvim_win_get_height(win), buf, vim.api.nvim_buf_get_name(buf)))
  end
end
local ok, state = pcall(require, 'acp_nvim.state')
if ok then
  for key, s in pairs(state.sessions or {}) do add(('session %s: %s'):format(key, tostring(s.state))) end
end
add('--- messages')
add(vim.fn.execute('messages'))
for _, name in ipairs(vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())) do
  if name:match('^acp://chat/') then
    local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr(name), -41, -1, false)
    add('--- ' .. name .. ' (last 40 lines)')
    add(table.concat(lines, '\n'))
  end
end
return table.concat(out, '\n')
"""


def describe(nvim: Any) -> str:
    """What the editor shows: windows and their buffers, sessions' states, messages, each chat's end."""
    try:
        return str(nvim.exec_lua(DESCRIBE_LUA))
    except Exception as exc:  # Neovim itself is gone or blocked: say so instead
        return f"(cannot read the editor: {exc!r})"


def buffer_text(nvim, name: str) -> str:
    """The whole text of the buffer called ``name`` ('' when it does not exist)."""
    buf = nvim.funcs.bufnr(name)
    if buf == -1:
        return ""
    return "\n".join(nvim.api.buf_get_lines(buf, 0, -1, False))


def chat(nvim, key: str = "demo/1") -> str:
    """The text of the chat buffer of session ``key`` (``acp://chat/<key>``)."""
    return buffer_text(nvim, f"acp://chat/{key}")


VIRT_LINES_LUA = """
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(vim.fn.bufnr(...), -1, 0, -1, { details = true })) do
  for _, vl in ipairs(m[4].virt_lines or {}) do
    local s = ''
    for _, chunk in ipairs(vl) do s = s .. chunk[1] end
    out[#out + 1] = s
  end
end
return out"""


def virt_lines(nvim, name: str = "acp://chat/demo/1") -> list[str]:
    """The text of every virtual line in buffer ``name``, in extmark order."""
    return nvim.exec_lua(VIRT_LINES_LUA, name)


CHAT_BLOCKS_LUA = """
local chat = require('acp_nvim.chat').chats[...]
local out = {}
for _, id in ipairs(chat:ids()) do
  local start, stop = chat:block_range(id)
  out[#out + 1] = { kind = chat.kinds[id], text = table.concat(vim.api.nvim_buf_get_lines(chat.buf, start, stop - 1,
    false), '\\n') }
end
return out"""


def chat_blocks(nvim, key: str = "demo/1") -> list[dict]:
    """The blocks the chat of session ``key`` draws, top to bottom: ``{kind, text}`` each."""
    return nvim.exec_lua(CHAT_BLOCKS_LUA, key)


def session_state(nvim, key: str = "demo/1") -> dict:
    """The Lua side's state of session ``key`` (``require('acp_nvim.state').sessions[key]``; {} when none)."""
    return nvim.exec_lua("return require('acp_nvim.state').sessions[...] or vim.empty_dict()", key)


def wait_idle(nvim, key: str = "demo/1", timeout: float = 30.0) -> dict:
    """Wait until session ``key`` is idle; its state."""
    def idle_state() -> dict:
        found = session_state(nvim, key)
        return found if found.get("state") == "idle" else {}
    return wait_for(idle_state, timeout=timeout, what=f"{key} to be idle", nvim=nvim)


def review_open(nvim) -> bool:
    """Whether the first pending review has its view open."""
    return nvim.exec_lua("local r = require('acp_nvim.review').pending()[1]; return r ~= nil and r.state == 'open'")


def wait_review(nvim, timeout: float = 20.0) -> None:
    wait_for(lambda: review_open(nvim), timeout=timeout, what="the review to open", nvim=nvim)


def status(nvim) -> str:
    """The statusline text (``require('acp_nvim').status()``)."""
    return nvim.exec_lua("return require('acp_nvim').status()")


ARMED_LUA = ("return require('acp_nvim.question.permission').armed() or require('acp_nvim.review').armed() "
             "or require('acp_nvim.question').armed()")


def freeze_guard_clock(nvim) -> None:
    """Stop the clock the key guard reads (``acp_nvim.kit.guard.now``): from now on, time passes for the
    guard only by ``advance_guard_clock``. A key typed "at once" after a question appears is then at
    once however slowly a loaded machine delivers it, and "after a pause" is a pause by construction."""
    nvim.exec_lua("local g = require('acp_nvim.kit.guard'); local t = g.now(); g.now = function() return t end")


def advance_guard_clock(nvim, ms: float) -> None:
    """Move the frozen guard clock ``ms`` milliseconds on (``freeze_guard_clock``)."""
    nvim.exec_lua("local g = require('acp_nvim.kit.guard'); local t = g.now() + ...; g.now = function() return t end",
                  ms)


def wait_armed(nvim, timeout: float = 10.0) -> None:
    """Wait until the prompt, review or question in front would take a key (acp_nvim.kit.guard: it has been
    visible ``permissions.arm_ms`` and nothing was typed for ``permissions.quiet_ms``)."""
    wait_for(lambda: nvim.exec_lua(ARMED_LUA), timeout=timeout, what="the prompt's keys to count", nvim=nvim)


def answer_keys(nvim, keys: str, timeout: float = 10.0) -> None:
    """Type ``keys`` into the prompt or review in front once its keys count, as a user who reads first."""
    wait_armed(nvim, timeout)
    nvim.input(keys)

PENDING_LUA = """
local p = require('acp_nvim.question.permission').pending()[1]
if p then
  for _, o in ipairs(p.q.options) do
    if o.kind == 'allow_once' then return {'prompt', p.id, o.id} end
  end
end
local ok, review = pcall(require, 'acp_nvim.review')
local r = ok and review.pending()[1]
if r then return {'review', r.id} end
"""


def allow(nvim, timeout: float = 30.0) -> None:
    """Allow the next permission request, wherever it is shown (prompt or review view)."""
    kind, qid, *option = wait_for(lambda: nvim.exec_lua(PENDING_LUA), timeout=timeout, what="a permission request",
                                  nvim=nvim)
    if kind == "prompt":
        nvim.exec_lua("require('acp_nvim.question.permission').choose(...)", qid, option[0])
    else:
        nvim.exec_lua("require('acp_nvim.review').decide_all(...)", qid, "accepted")


__all__ = [
    "ARMED_LUA",
    "NOTIFY",
    "PENDING_LUA",
    "SELECT",
    "WAIT_FLOOR",
    "WaitTimeout",
    "advance_guard_clock",
    "allow",
    "answer_keys",
    "async_wait_for",
    "buffer_text",
    "capture_notes",
    "chat",
    "chat_blocks",
    "describe",
    "freeze_guard_clock",
    "notes",
    "notify_stub",
    "session_state",
    "status",
    "virt_lines",
    "wait_armed",
    "wait_for",
    "wait_idle",
]
