"""Remembered permission rules: "always" answers, scoped to agent + workspace + tool kind.

Rules live in one small JSON file shared by every session (the editor layer says where);
each store re-reads it when it changed on disk, so two sessions never disagree.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import AcpNvimError

FILE_VERSION = 1
DECISIONS = ("allow", "reject")
_WORD = re.compile(r"^[A-Za-z0-9_][\w.:+-]*$")


class RulesFileError(AcpNvimError):
    """The rules file exists but cannot be read or written."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One remembered answer. ``prefix`` narrows execute rules to commands starting with it."""

    agent: str
    workspace: str
    kind: str
    decision: str
    prefix: str | None = None

    def matches(self, agent: str, workspace: str, kind: str, command: str | None) -> bool:
        """Whether this rule answers a request of ``kind`` (running ``command``) from ``agent``."""
        if (self.agent, self.workspace, self.kind) != (agent, workspace, kind):
            return False
        if self.prefix is None:
            return True
        return command is not None and (command == self.prefix or command.startswith(self.prefix + " "))

    def describe(self) -> str:
        """A one-line description, e.g. ``always allow execute `git status …` (demo in /ws)``."""
        scope = f" `{self.prefix} …`" if self.prefix else ""
        return f"always {self.decision} {self.kind}{scope} ({self.agent} in {self.workspace})"

    @staticmethod
    def from_dict(data: object) -> Rule:
        """Parse one stored rule; raise ValueError on anything malformed."""
        if not isinstance(data, dict):
            raise ValueError("a rule must be an object")
        fields = {key: data.get(key) for key in ("agent", "workspace", "kind", "decision")}
        if not all(isinstance(value, str) and value for value in fields.values()):
            raise ValueError(f"a rule needs agent, workspace, kind and decision strings: {data!r}")
        agent, workspace, kind, decision = (str(fields[k]) for k in ("agent", "workspace", "kind", "decision"))
        if decision not in DECISIONS:
            raise ValueError(f"decision must be allow or reject: {data!r}")
        prefix = data.get("prefix")
        if prefix is not None and not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string: {data!r}")
        return Rule(agent, workspace, kind, decision, prefix=prefix or None)


def command_prefix(command: str) -> str:
    """The program and, when it looks like one, its subcommand: ``git status -s`` → ``git status``."""
    words = command.split()
    if not words:
        return ""
    if len(words) > 1 and _WORD.match(words[1]) and "/" not in words[1]:
        return f"{words[0]} {words[1]}"
    return words[0]


def make_rule(agent: str, workspace: str, kind: str, command: str | None, allow: bool) -> Rule:
    """The rule an "always" answer creates (execute rules are narrowed to the command prefix)."""
    prefix = command_prefix(command) if kind == "execute" and command else None
    return Rule(agent, workspace, kind, "allow" if allow else "reject", prefix or None)


class RuleStore:
    """The rules file. ``path`` None keeps rules in memory only (tests, no state dir)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._rules: list[Rule] = []
        self._stamp: tuple[int, int] | None = None

    async def all(self) -> list[Rule]:
        """Every rule, fresh from disk when the file changed."""
        await asyncio.to_thread(self._refresh)
        return list(self._rules)

    async def match(self, agent: str, workspace: str, kind: str, command: str | None) -> Rule | None:
        """The first rule answering this request; reject rules win over allow rules."""
        found = [rule for rule in await self.all() if rule.matches(agent, workspace, kind, command)]
        return min(found, key=lambda rule: rule.decision != "reject", default=None)

    async def add(self, rule: Rule) -> bool:
        """Remember ``rule``; False when an identical rule exists. A contrary rule is replaced."""
        rules = await self.all()
        if rule in rules:
            return False
        rules = [r for r in rules if (r.agent, r.workspace, r.kind, r.prefix) !=
                 (rule.agent, rule.workspace, rule.kind, rule.prefix)]
        await asyncio.to_thread(self._save, [*rules, rule])
        return True

    async def remove(self, index: int) -> Rule:
        """Forget the rule at ``index`` (0-based, as listed by ``all``)."""
        rules = await self.all()
        if not 0 <= index < len(rules):
            raise AcpNvimError(f"no rule number {index + 1}; there are {len(rules)}")
        removed = rules.pop(index)
        await asyncio.to_thread(self._save, rules)
        return removed

    def _refresh(self) -> None:
        if self.path is None:
            return
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._rules, self._stamp = [], None
            return
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._rules = _parse(self.path)
            self._stamp = stamp

    def _save(self, rules: list[Rule]) -> None:
        self._rules = list(rules)
        if self.path is None:
            return
        data = {"version": FILE_VERSION, "rules": [_to_dict(rule) for rule in rules]}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp = self.path.with_suffix(".json.tmp")
            temp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(temp, self.path)
            stat = self.path.stat()
        except OSError as exc:
            raise RulesFileError(f"cannot write the rules file {self.path}: {exc}") from None
        self._stamp = (stat.st_mtime_ns, stat.st_size)


def _to_dict(rule: Rule) -> dict[str, object]:
    return {key: value for key, value in asdict(rule).items() if value is not None}


def _parse(path: Path) -> list[Rule]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data["rules"] if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ValueError("expected an object with a 'rules' list")
        return [Rule.from_dict(item) for item in items]
    except (OSError, ValueError, KeyError) as exc:
        raise RulesFileError(f"the rules file {path} is unreadable ({exc}); fix or delete it") from None
