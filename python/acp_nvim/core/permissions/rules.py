"""Remembered permission rules: "always" answers, scoped to agent + workspace + tool kind, and no wider
than what the user saw.

- An execute rule stores the command's scope (``command.py``): an exact command by default,
  ``git status -s …`` only for the read-only programs of ``exec_tables.SCOPED``. Complex commands
  (operators, substitutions, wrappers, options that run code, environment variables, …) never match
  a rule and never make one; a request without a command makes none. A rule for a workspace script
  holds the sha256 of the script's content when it was offered and matches only while it is the same:
  the script is read once when the rule is matched (``RuleRequest.scripts``), and the command then runs
  a private copy of exactly those bytes, never the path the agent can change meanwhile (``exec_gate``).
- An execute rule admits a command only while each of its words that names a path names one inside
  the workspace, with no link on the way, checked without following links when the command is
  matched (``command.path_problem``): a link or a path outside is put to the user, who is told so.
- A read/edit/delete/move/search rule answers only requests whose every path lies inside the
  workspace roots (a reject rule applies everywhere: it can only say no).
- Other kinds get no rule: there is nothing to scope one to.

Rules live in one small JSON file shared by every session (the editor layer says where), written
atomically with mode 0600. Every store of one file is the same object (``RuleStore.at``), and it
re-reads the file when it changed on disk, so two sessions never disagree. Rules of older versions
that allow more than one request showed (a bare program, every command of a kind) are kept in the
file but inactive, listed by ``:Ai rules`` for removal; so are rules that are wider than a rule may be
now (a scope for a program not on the allow-list, an option that runs code, a script without its hash).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from ..errors import AcpNvimError
from .command import Command, Scope, ScriptRead, parse_shell, path_problems, read_scripts, scope_of, script_paths

FILE_VERSION = 3
DECISIONS = ("allow", "reject")
PATH_KINDS = ("read", "edit", "delete", "move", "search")
"""Kinds whose rules hold inside the workspace roots only."""
EXECUTE = "execute"
FILE_MODE = 0o600
_T = TypeVar("_T")


class RulesFileError(AcpNvimError):
    """The rules file exists but cannot be read or written."""


@dataclass(frozen=True, slots=True)
class RuleRequest:
    """What a rule is matched against: who asks, where, for what (``inside``: every path in the workspace)."""

    agent: str
    workspace: str
    kind: str
    command: Command | None
    inside: bool
    scripts: tuple[ScriptRead, ...] | None = None
    """The workspace scripts the command runs, read once (``read_scripts``): a rule bound to their content
    is matched against these bytes, which are what the command then runs. None: read when matched."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One remembered answer. Execute rules carry the command scope (``words``, ``exact``).

    ``prefix`` is set only on a rule of file version 1 that allowed more than the user saw (a bare
    program, any arguments): kept as it was, but inactive. ``inactive`` says why a rule never matches.
    """

    agent: str
    workspace: str
    kind: str
    decision: str
    words: tuple[str, ...] = ()
    exact: bool = False
    prefix: str | None = None
    options: tuple[str, ...] = ()
    """A scope rule's options as shown: the only options it admits."""
    scripts: tuple[tuple[str, str], ...] = ()
    """Workspace scripts the command runs, with the sha256 of each when the rule was offered."""

    @property
    def inactive(self) -> str | None:
        """Why this rule never answers anything (None: it is active)."""
        if self.prefix is not None:
            return f"made by an older version for `{self.prefix}` with any arguments: too wide"
        if self.kind == EXECUTE:
            scope = self.scope
            if scope is None:
                return "an execute rule must name a command"
            wide = scope.widens
            if wide:
                return f"wider than a rule may be now: {wide}"
            unbound = set(script_paths(self.words, None, self.workspace)) - {path for path, _ in self.scripts}
            if unbound:
                return f"runs the workspace script {sorted(unbound)[0]} without its content hash"
            return None
        if self.kind not in PATH_KINDS:
            return f"a rule for every {self.kind} request would allow more than one request showed"
        return None

    @property
    def scope(self) -> Scope | None:
        return Scope(self.words, self.exact, self.options) if self.words else None

    def matches(self, request: RuleRequest) -> bool:
        """Whether this rule answers ``request`` (a script-bound rule reads its scripts: call in a thread)."""
        if self.inactive or (self.agent, self.workspace, self.kind) != (request.agent, request.workspace,
                                                                          request.kind):
            return False
        if self.kind == EXECUTE:
            scope = self.scope
            command = request.command
            if scope is None or command is None or not scope.allows(command):
                return False
            if path_problems(command, self.workspace):
                return False  # a link, or a path outside: the user sees where it leads
            reads = request.scripts
            if reads is None:
                reads = read_scripts(command.texts, command.cwd, self.workspace)
            return tuple((read.path, read.digest) for read in reads) == self.scripts
        return request.inside or self.decision == "reject"

    def what(self) -> str:
        """What the rule covers: ``execute `git status …` (with any further arguments)``."""
        scope = self.scope
        if self.kind == EXECUTE and scope is not None:
            text = f"{self.kind} {scope.describe()}"
            for path, digest in self.scripts:
                text += (f"; bound to the content of {path} (sha256 {digest[:12]}…): asks again when it changes"
                         if digest else f"; only while {path} does not exist")
            code = scope.runs_workspace_code()
            return f"{text}; note: {code}" if code else text
        if self.kind in PATH_KINDS and self.decision == "allow":
            return f"{self.kind} inside the workspace"
        return self.kind

    def describe(self) -> str:
        """A one-line description, e.g. ``always allow execute `git status …` (…) (demo in /ws)``."""
        text = f"always {self.decision} {self.what()} ({self.agent} in {self.workspace})"
        return f"{text} [inactive: {self.inactive}]" if self.inactive else text

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"agent": self.agent, "workspace": self.workspace, "kind": self.kind,
                                   "decision": self.decision}
        if self.words:
            data["command"] = list(self.words)
            data["exact"] = self.exact
        if self.options:
            data["options"] = list(self.options)
        if self.scripts:
            data["scripts"] = [list(pair) for pair in self.scripts]
        if self.prefix is not None:
            data["prefix"] = self.prefix
        return data

    @staticmethod
    def from_dict(data: object) -> Rule:
        """Parse one stored rule (either file version); raise ValueError on anything malformed."""
        if not isinstance(data, dict):
            raise ValueError("a rule must be an object")
        fields = {key: data.get(key) for key in ("agent", "workspace", "kind", "decision")}
        if not all(isinstance(value, str) and value for value in fields.values()):
            raise ValueError(f"a rule needs agent, workspace, kind and decision strings: {data!r}")
        agent, workspace, kind, decision = (str(fields[k]) for k in ("agent", "workspace", "kind", "decision"))
        if decision not in DECISIONS:
            raise ValueError(f"decision must be allow or reject: {data!r}")
        words, exact = data.get("command"), data.get("exact", False)
        if words is not None:
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words) or not words:
                raise ValueError(f"command must be a list of words: {data!r}")
            if not isinstance(exact, bool):
                raise ValueError(f"exact must be true or false: {data!r}")
            return Rule(agent, workspace, kind, decision, tuple(words), exact, options=_strings(data, "options"),
                        scripts=_scripts(data))
        prefix = data.get("prefix")
        if prefix is not None and not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string: {data!r}")
        if prefix:
            return _from_prefix(agent, workspace, kind, decision, prefix)
        return Rule(agent, workspace, kind, decision)


def _strings(data: dict[str, object], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings: {data!r}")
    return tuple(str(v) for v in value)


def _scripts(data: dict[str, object]) -> tuple[tuple[str, str], ...]:
    value = data.get("scripts", [])
    pairs = value if isinstance(value, list) else None
    if pairs is None or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(v, str) for v in p)
                                for p in pairs):
        raise ValueError(f"scripts must be a list of [path, sha256] pairs: {data!r}")
    return tuple((str(p[0]), str(p[1])) for p in pairs)


def _from_prefix(agent: str, workspace: str, kind: str, decision: str, prefix: str) -> Rule:
    """A version-1 prefix rule: kept when the prefix is what a rule would store today, else inactive."""
    scope, _ = scope_of(parse_shell(prefix))
    if kind == EXECUTE and scope is not None and not scope.exact and " ".join(scope.words) == prefix:
        return Rule(agent, workspace, kind, decision, scope.words, exact=False)
    return Rule(agent, workspace, kind, decision, prefix=prefix)


@dataclass(frozen=True, slots=True)
class RuleOffer:
    """What an "always" answer would store (``rule``), or why there is none (``reason``)."""

    rule: Rule | None
    reason: str | None = None
    scripts: tuple[ScriptRead, ...] = ()
    """The bytes the rule's script hashes were taken of: an "always" answer runs these."""


def offer(agent: str, workspace: str, kind: str, command: Command | None, allow: bool) -> RuleOffer:
    """The rule an "always" answer to a request makes, or why it makes none."""
    decision = "allow" if allow else "reject"
    if kind == EXECUTE:
        if command is None:
            return RuleOffer(None, "the request names no command")
        scope, why = scope_of(command)
        if scope is None:
            return RuleOffer(None, f"the command is not a simple command: {why}")
        reads = read_scripts(command.texts, command.cwd, workspace)
        if any(read.digest == "too large" for read in reads):
            return RuleOffer(None, "the script it runs is too large to fingerprint")
        scripts = tuple((read.path, read.digest) for read in reads)
        return RuleOffer(Rule(agent, workspace, kind, decision, scope.words, scope.exact, options=scope.options,
                              scripts=scripts), scripts=reads)
    if kind in PATH_KINDS:
        return RuleOffer(Rule(agent, workspace, kind, decision))
    return RuleOffer(None, f"a {kind} request has nothing a rule could be limited to")


class RuleStore:
    """The rules file. ``path`` None keeps rules in memory only (tests, no state dir)."""

    _shared: ClassVar[dict[Path, RuleStore]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._rules: list[Rule] = []
        self._stamp: tuple[int, int, int] | None = None
        self._lock = threading.Lock()

    @classmethod
    def at(cls, path: Path) -> RuleStore:
        """The one store of the file at ``path`` in this process (sessions and commands share it)."""
        key = Path(os.path.abspath(path))
        with cls._shared_lock:
            store = cls._shared.get(key)
            if store is None:
                store = cls._shared[key] = RuleStore(key)
            return store

    async def all(self) -> list[Rule]:
        """Every rule (inactive ones too), fresh from disk when the file changed."""
        return await asyncio.to_thread(self._locked, lambda: list(self._rules))

    async def match(self, request: RuleRequest) -> Rule | None:
        """The first rule answering ``request``; reject rules win over allow rules."""
        found = await asyncio.to_thread(self._locked, lambda: [r for r in self._rules if r.matches(request)])
        return min(found, key=lambda rule: rule.decision != "reject", default=None)

    async def add(self, rule: Rule) -> bool:
        """Remember ``rule``; False when an identical rule exists. A contrary rule is replaced."""
        return await asyncio.to_thread(self._locked, lambda: self._add(rule))

    async def remove(self, index: int) -> Rule:
        """Forget the rule at ``index`` (0-based, as listed by ``all``)."""
        return await asyncio.to_thread(self._locked, lambda: self._remove(index))

    def _locked(self, action: Callable[[], _T]) -> _T:
        with self._lock:
            self._refresh()
            return action()

    def _add(self, rule: Rule) -> bool:
        if rule in self._rules:
            return False
        same = (rule.agent, rule.workspace, rule.kind, rule.words, rule.exact, rule.options)
        kept = [r for r in self._rules
                if (r.agent, r.workspace, r.kind, r.words, r.exact, r.options) != same or r.prefix]
        self._save([*kept, rule])
        return True

    def _remove(self, index: int) -> Rule:
        if not 0 <= index < len(self._rules):
            raise AcpNvimError(f"no rule number {index + 1}; there are {len(self._rules)}")
        rules = list(self._rules)
        removed = rules.pop(index)
        self._save(rules)
        return removed

    def _refresh(self) -> None:
        if self.path is None:
            return
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._rules, self._stamp = [], None
            return
        except OSError as exc:
            raise RulesFileError(f"the rules file {self.path} is unreadable ({exc})") from None
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if stamp != self._stamp:
            self._rules = _parse(self.path)
            self._stamp = stamp

    def _save(self, rules: list[Rule]) -> None:
        if self.path is not None:
            data = {"version": FILE_VERSION, "rules": [rule.to_dict() for rule in rules]}
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            try:
                stat = write_atomic(self.path, text.encode("utf-8"))
            except OSError as exc:
                raise RulesFileError(f"cannot write the rules file {self.path}: {exc}") from None
            self._stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        self._rules = list(rules)


def write_atomic(path: Path, data: bytes) -> os.stat_result:
    """Replace ``path`` with ``data``: a 0600 temp file in the same folder, fsync, rename, fsync the folder."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return path.stat()


def _parse(path: Path) -> list[Rule]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data["rules"] if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ValueError("expected an object with a 'rules' list")
        return [Rule.from_dict(item) for item in items]
    except (OSError, ValueError, KeyError) as exc:
        raise RulesFileError(f"the rules file {path} is unreadable ({exc}); fix or delete it") from None
