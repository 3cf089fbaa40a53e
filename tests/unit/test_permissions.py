"""Policy modes, choosing options by kind, and the remembered-rules file."""

from __future__ import annotations

import json

import pytest

from acp_nvim.core.config import parse_settings
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.permissions import rules as rules_module
from acp_nvim.core.permissions.command import parse_shell
from acp_nvim.core.permissions.policy import ALLOW_ALWAYS_FIRST, ALLOW_ONCE_FIRST, REJECT_ONCE_FIRST, decide, pick
from acp_nvim.core.permissions.rules import Rule, RuleRequest, RulesFileError, RuleStore, offer
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
    reject = Rule("demo", "/ws", "execute", "reject", ("rm", "-rf", "build"), exact=True)
    auto = decide(DEMO, "execute", "trust", reject, True)
    assert auto.choice.option_id == "demo-no" and not auto.allowed and "rule" in auto.reason
    allow = Rule("demo", "/ws", "execute", "allow", ("git", "status"))
    assert decide(DEMO, "execute", "ask", allow, True).choice.option_id == "demo-yes"


def test_an_allow_edit_rule_never_answers_outside_the_workspace():
    allow = Rule("demo", "/ws", "edit", "allow")
    assert decide(DEMO, "edit", "ask", allow, True).choice.option_id == "demo-yes"
    assert decide(DEMO, "edit", "ask", allow, False) is None
    assert decide(DEMO, "edit", "auto-edit", allow, False) is None, "nor does auto-edit"


def test_policy_setting_is_validated():
    assert parse_settings({"permissions": {"policy": "auto-edit"}}).permissions.policy == "auto-edit"
    assert parse_settings({}).permissions.close_is_reject is True
    with pytest.raises(ConfigError, match=r"permissions\.policy"):
        parse_settings({"permissions": {"policy": "yolo"}})


# -- rules (the table of commands: test_rule_table.py) ---------------------------------------


def git_status(command: str = "git status -s") -> Rule:
    rule = offer("demo", "/ws", "execute", parse_shell(command), allow=True).rule
    assert rule is not None
    return rule


def request(command: str | None, agent: str = "demo", workspace: str = "/ws", kind: str = "execute",
            inside: bool = True) -> RuleRequest:
    return RuleRequest(agent, workspace, kind, parse_shell(command) if command is not None else None, inside)


def test_rule_scope_is_agent_workspace_kind_and_command():
    rule = git_status()
    assert rule == Rule("demo", "/ws", "execute", "allow", ("git", "status"), options=("-s",))
    assert rule.matches(request("git status")) and rule.matches(request("git status -s src"))
    assert not rule.matches(request("git status --short")), "only the options shown"
    assert not rule.matches(request("git statusx")) and not rule.matches(request("git push"))
    assert not rule.matches(request("git status", agent="claude"))
    assert not rule.matches(request("git status", workspace="/other"))
    assert not rule.matches(request(None)), "a request without a command matches no execute rule"
    edit = offer("demo", "/ws", "edit", None, allow=True).rule
    assert edit is not None and edit.words == () and edit.matches(request(None, kind="edit"))
    assert not edit.matches(request(None, kind="delete"))


async def test_store_round_trip_and_sharing(tmp_path):
    path = tmp_path / "state" / "rules.json"
    first, second = RuleStore.at(path), RuleStore.at(path)
    assert first is second, "one store per file: sessions and :Ai rules never race each other"
    other = RuleStore(path)
    rule = git_status("git status")
    assert await first.add(rule) is True
    assert await first.add(rule) is False
    assert await other.match(request("git status src")) == rule
    data = json.loads(path.read_text())
    assert data == {"version": 3, "rules": [{"agent": "demo", "workspace": "/ws", "kind": "execute",
                                             "decision": "allow", "command": ["git", "status"], "exact": False}]}
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["rules.json"], "no temp file left behind"
    removed = await other.remove(0)
    assert removed == rule
    assert await first.all() == []


async def test_the_rules_file_is_replaced_never_rewritten_in_place(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text('{"version": 2, "rules": []}')
    path.chmod(0o644)
    before = path.stat().st_ino
    store = RuleStore(path)
    await store.add(git_status())
    assert path.stat().st_ino != before and path.stat().st_mode & 0o777 == 0o600


async def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "rules.json"
    store = RuleStore(path)
    await store.add(git_status())
    text = path.read_text()

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rules_module.os, "fsync", disk_full)
    with pytest.raises(RulesFileError, match=r"cannot write the rules file.*No space left"):
        await store.add(git_status("npm test"))
    assert path.read_text() == text and len(list(tmp_path.iterdir())) == 1, "old text kept, no temp file left"
    assert len(await store.all()) == 1


async def test_contrary_answer_replaces_the_rule(tmp_path):
    store = RuleStore(tmp_path / "rules.json")
    await store.add(Rule("demo", "/ws", "edit", "allow"))
    await store.add(Rule("demo", "/ws", "edit", "reject"))
    rules = await store.all()
    assert [r.decision for r in rules] == ["reject"]


async def test_reject_rules_win(tmp_path):
    store = RuleStore(None)
    await store.add(Rule("demo", "/ws", "execute", "allow", ("git", "log")))
    await store.add(Rule("demo", "/ws", "execute", "reject", ("git", "log", "secret"), exact=True))
    assert (await store.match(request("git log secret"))).decision == "reject"
    assert (await store.match(request("git log"))).decision == "allow"


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
