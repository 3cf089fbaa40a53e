"""The entry points from Lua into the Python host: one registry (python/acp_nvim/nvim/commands/entry_points.py),
the Lua table made from it, and the remote plugin pynvim's host loads (python/acp_nvim/plugin.py)."""

from __future__ import annotations

from pathlib import Path

from pynvim.plugin.host import Host

import acp_nvim.plugin
from acp_nvim.nvim.app import App
from acp_nvim.nvim.commands import subcommand_docs
from acp_nvim.nvim.commands.entry_points import ENTRY_POINTS, EntryPoint
from acp_nvim.plugin import _arguments

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PATH = str(ROOT / "rplugin" / "python3" / "acp_nvim")


def loaded() -> Host:
    """pynvim's host with the plugin discovered as its `_load` does it (no Neovim needed)."""
    host = Host(None)
    host._discover_classes(acp_nvim.plugin, [], PLUGIN_PATH)
    return host


def test_the_lua_table_is_made_from_the_registry():
    assert subcommand_docs.ENTRY_LUA_FILE.read_text("utf-8") == subcommand_docs.entry_points_table(), \
        "run `make docs`: lua/acp_nvim/host/entry_points.lua differs from python/acp_nvim/nvim/commands/entry_points.py"


def test_pynvims_host_registers_one_handler_per_entry_point_under_its_method():
    host = loaded()
    notifications = {name for name in host._notification_handlers if name.startswith("acp_nvim:")}
    requests = {name for name in host._request_handlers if name.startswith("acp_nvim:")}
    assert notifications == {e.method for e in ENTRY_POINTS if not e.sync}
    assert requests == {e.method for e in ENTRY_POINTS if e.sync}
    assert {"poll", "specs", "shutdown"} <= set(host._request_handlers), "pynvim's own requests stay its own"


def test_update_remote_plugins_finds_no_spec_to_write_into_the_manifest():
    """No function, command or autocommand spec: :UpdateRemotePlugins defines nothing that would start
    Neovim's provider host, a second copy of the plugin."""
    assert loaded()._specs.get(PLUGIN_PATH, 0) == 0


def test_every_entry_point_calls_an_app_method_that_takes_its_arguments():
    for entry in ENTRY_POINTS:
        if entry.app is None:
            continue
        method = getattr(App, entry.app)
        params = method.__code__.co_varnames[1 : method.__code__.co_argcount]
        assert len(params) == len(entry.params), f"{entry.name}: App.{entry.app}{params} vs {entry.params}"


def test_left_out_optional_arguments_are_none_and_a_wrong_count_names_the_call():
    entry = EntryPoint("answer", ("id", "option"), "answer", "", optional=1)
    assert _arguments(entry, [3]) == [3, None]
    assert _arguments(entry, [3, "x"]) == [3, "x"]
    for wrong in ([], [1, 2, 3]):
        try:
            _arguments(entry, wrong)
        except TypeError as exc:
            assert "answer takes (id, option)" in str(exc)
        else:
            raise AssertionError(f"{wrong} accepted")


def test_the_rplugin_package_is_this_checkouts_plugin():
    text = (ROOT / "rplugin" / "python3" / "acp_nvim" / "__init__.py").read_text("utf-8")
    assert "from acp_nvim.plugin import AcpNvimPlugin" in text
    assert sorted(p.name for p in (ROOT / "rplugin" / "python3" / "acp_nvim").iterdir()
                  if p.name != "__pycache__") == ["__init__.py"], "its submodules come from python/acp_nvim"
