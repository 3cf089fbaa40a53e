"""The configuration schema (core/config.py) is the one source of setup()'s defaults, bounds and
messages: the Lua table and :help acp_nvim-config made from it are current, and say what it says."""

from __future__ import annotations

import pytest

from acp_nvim.core.config import Settings, parse_settings
from acp_nvim.core.connection.mode_policy import MODE_TABLE
from acp_nvim.core.errors import ConfigError
from acp_nvim.nvim.commands import config_docs


def test_generated_files_match_the_schema():
    stale = [str(path.relative_to(config_docs.ROOT)) for path in config_docs.stale()]
    assert stale == [], f"run `make docs`: {stale} differ from python/acp_nvim/core/config.py"


def test_the_drift_check_sees_a_changed_key_list():
    text = config_docs.VIMDOC.read_text("utf-8")
    planted = text.replace("`timeouts.cancel`  seconds", "`timeouts.cancel`  minutes")
    assert planted != text and config_docs.vimdoc(planted) == text


def key(path: str) -> config_docs.Key:
    return next(k for k in config_docs.keys() if k.path == path)


def test_every_user_key_is_described_and_internal_ones_are_not_listed():
    found = {k.path: k for k in config_docs.keys()}
    assert [path for path, k in found.items() if not k.description] == []
    assert "history.enabled" not in found and "restart_key" not in found
    assert {"agents.{name}.url", "keymaps.restart", "terminals.kill_grace", "prestart"} <= set(found)


@pytest.mark.parametrize(("path", "message"), [
    ("permissions.arm_ms", "expected a whole number from 0 to 10000"),
    ("timeouts.handshake", "expected seconds, more than 0 and at most 3600"),
    ("history.max_sessions", "expected a whole number >= 1"),
    ("wire.max_line_bytes", "expected a whole number of bytes >= 1024"),
    ("permissions.rejected.max_age_days", "expected a number >= 0"),
    ("log.level", "expected one of trace, debug, info, warn, error"),
])
def test_messages_come_from_the_bounds(path, message):
    assert config_docs.expectation(key(path)) == message


def test_lua_defaults_are_the_models_defaults():
    defaults = config_docs._defaults()
    settings = Settings()
    assert defaults["permissions"]["arm_ms"] == settings.permissions.arm_ms
    assert defaults["timeouts"]["handshake"] == settings.timeouts.handshake
    assert defaults["keymaps"]["restart"] == settings.restart_key == "<LocalLeader>R"
    assert "enabled" not in defaults["history"]
    assert parse_settings(defaults).model_dump() == settings.model_dump()


def test_keys_only_lua_used_are_checked_by_the_models_too():
    with pytest.raises(ConfigError, match=r"chat\.position: .*expected one of right, left, bottom, current"):
        parse_settings({"chat": {"position": "top"}})
    with pytest.raises(ConfigError, match=r"chat\.max_block_lines"):
        parse_settings({"chat": {"max_block_lines": 0}})
    assert parse_settings({"keymaps": {"restart": ""}}).restart_key == ""


@pytest.mark.parametrize("entry", [e for e in MODE_TABLE if e.preset], ids=lambda e: e.preset)
def test_each_presets_modes_mean_what_the_mode_table_says(entry):
    modes = dict(entry.preset_modes)
    assert set(modes) == {"ask", "auto-edit", "trust"}
    assert modes["ask"] == entry.asks
    assert modes["auto-edit"] in entry.skips_edits | entry.skips_all
    assert modes["trust"] in entry.skips_all
