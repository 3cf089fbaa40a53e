"""Policy modes, choosing options by kind, and the remembered-rules file."""

from __future__ import annotations

import json

import pytest

from acp_nvim.core.config import parse_settings
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.permissions.policy import ALLOW_ALWAYS_FIRST, ALLOW_ONCE_FIRST, REJECT_ONCE_FIRST, decide, pick
from acp_nvim.core.permissions.rules import Rule, RulesFileError, RuleStore, command_prefix, make_rule
from acp_nvim.core.port import PermissionChoice

# optionIds differ from kinds on purpose, as real agents' do
DEMO = (
    PermissionChoice("demo-yes", "Allow once", "allow_once"),
    PermissionChoice("demo-always", "Always allow", "allow_always"),
    PermissionChoice("demo-no", "Reject", "reject_once"),
    PermissionChoice("demo-never", "Always reject", "reject_always"),
)
CLAUDE = (  # no reject_always, no allow_always for some tools
    PermissionChoice("allow-once", "Allow", "allow_once"),
    PermissionChoice("reject", "Reject", "reject_once"),
)
GEMINI = (
    PermissionChoice("proceed_always", "Always", "allow_always"),
    PermissionChoice("proceed_once", "Once", "allow_once"),
    PermissionChoice("cancel", "Cancel", "reject_once"),
)


@pytest.mark.parametrize(("choices", "kinds", "expected"), [
    (DEMO, ALLOW_ONCE_FIRST, "demo-yes"),
    (DEMO, ALLOW_ALWAYS_FIRST, "demo-always"),
    (DEMO, REJECT_ONCE_FIRST, "demo-no"),
    (CLAUDE, ALLOW_ALWAYS_FIRST, "allow-once"),  # falls back to allow_once
    (GEMINI, ALLOW_ONCE_FIRST, "proceed_once"),  # by kind, not by position
    (GEMINI, REJECT_ONCE_FIRST, "cancel"),
])
def test_pick_by_kind(choices, kinds, expected):
    assert pick(choices, kinds).option_id == expected


def test_pick_nothing_when_the_kind_is_not_offered():
    assert pick((PermissionChoice("x", "Allow", "allow_once"),), REJECT_ONCE_FIRST) is None


def test_ask_never_answers_by_itself():
    assert decide(DEMO, "edit", "ask", None, True) is None
    assert decide(DEMO, "execute", "ask", None, True) is None


def test_auto_edit_accepts_only_edits_inside_the_workspace():
    auto = decide(DEMO, "edit", "auto-edit", None, True)
    assert auto is not None and auto.choice.option_id == "demo-yes" and "auto-edit" in auto.reason
    assert decide(DEMO, "edit", "auto-edit", None, False) is None
    assert decide(DEMO, "execute", "auto-edit", None, True) is None
    assert decide(DEMO, "delete", "auto-edit", None, True) is None


def test_trust_prefers_allow_always_then_allow_once():
    assert decide(DEMO, "execute", "trust", None, False).choice.option_id == "demo-always"
    assert decide(CLAUDE, "execute", "trust", None, False).choice.option_id == "allow-once"


def test_rules_win_over_the_policy():
    reject = Rule("demo", "/ws", "execute", "reject", "rm")
    auto = decide(DEMO, "execute", "trust", reject, True)
    assert auto.choice.option_id == "demo-no" and not auto.allowed and "rule" in auto.reason
    allow = Rule("demo", "/ws", "execute", "allow", "git status")
    assert decide(DEMO, "execute", "ask", allow, True).choice.option_id == "demo-yes"


def test_policy_setting_is_validated():
    assert parse_settings({"permissions": {"policy": "auto-edit"}}).permissions.policy == "auto-edit"
    assert parse_settings({}).permissions.close_is_reject is True
    with pytest.raises(ConfigError, match=r"permissions\.policy"):
        parse_settings({"permissions": {"policy": "yolo"}})


# -- rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "prefix"), [
    ("git status -s", "git status"),
    ("npm run test", "npm run"),
    ("ls -la", "ls"),
    ("rm -rf build", "rm"),
    ("cat /etc/passwd", "cat"),
    ("make", "make"),
])
def test_command_prefix(command, prefix):
    assert command_prefix(command) == prefix


def test_rule_scope_is_agent_workspace_kind_and_prefix():
    rule = make_rule("demo", "/ws", "execute", "git status -s", allow=True)
    assert rule == Rule("demo", "/ws", "execute", "allow", "git status")
    assert rule.matches("demo", "/ws", "execute", "git status")
    assert rule.matches("demo", "/ws", "execute", "git status --short")
    assert not rule.matches("demo", "/ws", "execute", "git statusx")
    assert not rule.matches("demo", "/ws", "execute", "git push")
    assert not rule.matches("claude", "/ws", "execute", "git status")
    assert not rule.matches("demo", "/other", "execute", "git status")
    edit = make_rule("demo", "/ws", "edit", None, allow=True)
    assert edit.prefix is None and edit.matches("demo", "/ws", "edit", None)
    assert not edit.matches("demo", "/ws", "delete", None)


async def test_store_round_trip_and_sharing(tmp_path):
    path = tmp_path / "state" / "rules.json"
    first, second = RuleStore(path), RuleStore(path)
    rule = make_rule("demo", "/ws", "execute", "git status", allow=True)
    assert await first.add(rule) is True
    assert await first.add(rule) is False
    assert await second.match("demo", "/ws", "execute", "git status -v") == rule
    data = json.loads(path.read_text())
    assert data["rules"] == [{"agent": "demo", "workspace": "/ws", "kind": "execute", "decision": "allow",
                              "prefix": "git status"}]
    removed = await second.remove(0)
    assert removed == rule
    assert await first.all() == []


async def test_contrary_answer_replaces_the_rule(tmp_path):
    store = RuleStore(tmp_path / "rules.json")
    await store.add(make_rule("demo", "/ws", "edit", None, allow=True))
    await store.add(make_rule("demo", "/ws", "edit", None, allow=False))
    rules = await store.all()
    assert [r.decision for r in rules] == ["reject"]


async def test_reject_rules_win(tmp_path):
    store = RuleStore(None)
    await store.add(Rule("demo", "/ws", "execute", "allow", None))
    await store.add(Rule("demo", "/ws", "execute", "reject", "rm"))
    assert (await store.match("demo", "/ws", "execute", "rm -rf x")).decision == "reject"
    assert (await store.match("demo", "/ws", "execute", "ls")).decision == "allow"


async def test_unreadable_rules_file_is_a_clear_error(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text("{not json")
    with pytest.raises(RulesFileError, match=r"unreadable.*fix or delete it"):
        await RuleStore(path).all()
    path.write_text(json.dumps({"rules": [{"agent": "demo"}]}))
    with pytest.raises(RulesFileError, match="needs agent, workspace, kind and decision"):
        await RuleStore(path).all()


async def test_remove_out_of_range(tmp_path):
    store = RuleStore(tmp_path / "rules.json")
    with pytest.raises(Exception, match="no rule number 3"):
        await store.remove(2)
