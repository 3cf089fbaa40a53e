from __future__ import annotations

import sys

import pytest

from acp_nvim.core.config import parse_settings
from acp_nvim.core.errors import ConfigError


def test_demo_agent_is_default_without_setup():
    name, spec = parse_settings({}).agent(None)
    assert name == "demo"
    assert spec.command == sys.executable
    assert spec.args == ["-m", "acp_nvim.demo_agent"]


def test_lua_empty_tables_are_accepted():
    settings = parse_settings({"agents": [], "default_agent": "demo", "log": []})
    assert settings.agents == {}


def test_agent_is_configuration():
    settings = parse_settings({"agents": {"g": {"command": "gemini", "args": ["--acp"], "env": {"K": "v"}}},
                               "default_agent": "g"})
    name, spec = settings.agent(None)
    assert (name, spec.command, spec.args, spec.env) == ("g", "gemini", ["--acp"], {"K": "v"})


def test_errors_name_the_key_path():
    with pytest.raises(ConfigError, match=r"agents\.g\.args\.0"):
        parse_settings({"agents": {"g": {"command": "x", "args": [3]}}})
    with pytest.raises(ConfigError, match="unknown agent 'zzz'"):
        parse_settings({}).agent("zzz")


def test_redaction_patterns_are_checked_with_their_key_path():
    from acp_nvim.core.config import parse_settings

    assert parse_settings({"redaction": {"patterns": [r"ACME-\d+"]}}).redaction.patterns == [r"ACME-\d+"]
    assert parse_settings({"redaction": {"patterns": []}}).redaction.patterns == []
    assert parse_settings({"redaction": []}).redaction.patterns == []
    with pytest.raises(ConfigError, match=r"redaction\.patterns\.0: .*not a regular expression"):
        parse_settings({"redaction": {"patterns": ["(open"]}})
    with pytest.raises(ConfigError, match="matches the empty string"):
        parse_settings({"redaction": {"patterns": ["x*"]}})
