"""Lua stubs that tests install in Neovim, and reading what they recorded."""

from __future__ import annotations


def notify_stub(store: str = "notes") -> str:
    """Lua that keeps the text of every ``vim.notify`` message, in order, in ``_G.<store>``."""
    return f"_G.{store} = {{}}\nvim.notify = function(msg, level) table.insert(_G.{store}, msg) end\n"


NOTIFY = notify_stub()
"""``notify_stub()``: the messages go to ``_G.notes`` (read them with ``notes``)."""

SELECT = """_G.picked = {}
_G.choose = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.picked, { prompt = opts.prompt, items = items })
  local pattern = table.remove(_G.choose, 1)
  for i, item in ipairs(items) do
    if pattern and item:find(pattern, 1, true) then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
"""
"""A ``vim.ui.select`` that picks the first item containing the next text of ``_G.choose`` (none left
or no match: cancelled) and keeps every question it was asked in ``_G.picked``."""


def capture_notes(nvim, store: str = "notes") -> None:
    """Install ``notify_stub(store)`` in ``nvim`` (messages before it are not kept)."""
    nvim.exec_lua(notify_stub(store))


def notes(nvim, store: str = "notes") -> list[str]:
    """The messages ``notify_stub(store)`` kept so far."""
    return nvim.exec_lua(f"return _G.{store}")


def call_recorder(entry: str, store: str) -> str:
    """Lua that replaces the host entry point ``entry`` (``require('acp_nvim.host').call[entry]``):
    each call's arguments (nil as v:null) are appended to ``g:<store>`` instead of reaching Python."""
    return (f"vim.g.{store} = {{}}\n"
            f"require('acp_nvim.host').call.{entry} = function(...)\n"
            "  local args = {}\n"
            "  for i = 1, math.max(select('#', ...), 2) do\n"
            "    local value = select(i, ...)\n"
            "    args[i] = value == nil and vim.NIL or value\n"
            "  end\n"
            f"  local calls = vim.g.{store}\n"
            "  table.insert(calls, args)\n"
            f"  vim.g.{store} = calls\n"
            "end\n")
