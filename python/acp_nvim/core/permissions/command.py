"""Execute commands read the way bash reads them, so "always" rules allow no more than the user saw.

A rule may only come from, and only match, a *simple* command: one program and its words, as bash
would pass them after quote removal. Anything that could run more than what the words show —
operators (``;`` ``&&`` ``||`` ``|`` ``&``), redirections, ``$(…)``, backticks, ``$VAR``,
subshells and ``{ …; }``, newlines, comments, ``X=… cmd`` — makes the command *complex*: it never
matches a rule and never creates one. So do wrappers that run another command (``bash -c``,
``sudo``, ``env``, ``xargs``, ``eval``, ``exec``, ``nohup``, ``time``, ``command``, ``builtin``, …)
and a program name that bash would expand (wildcards, braces).

The scope a rule stores (``Scope``): the program and its *subcommand words* — the words right
after it made of lowercase letters, digits, ``-``, ``_`` and ``:`` (no options, paths, dots or
``=``), at most ``MAX_SUBCOMMAND_WORDS`` — followed by any further arguments: ``git status -s`` →
``git status …``. The rule is *exact* instead (the whole command, word for word, nothing more)
when there is no subcommand word (``ls -la``, ``rm -rf build``), when the program acts on whatever
its arguments name (``rm``, ``mv``, ``curl``, interpreters, …: ``EXACT_PROGRAMS``), or when a
subcommand word runs another command (``npm run``, ``uv run``, ``docker exec``: ``RUNNER_WORDS``).
An exact command with wildcards gets no rule (what they match changes).

An agent that sends its command as an argument list gets those words as they are (no shell);
the list ``[bash, -lc, SCRIPT]`` (Codex wraps every command so) is read as SCRIPT.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

MAX_SUBCOMMAND_WORDS = 2
SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_:-]*$")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
                    "pwsh", "powershell"})
WRAPPERS = SHELLS | frozenset({
    "eval", "exec", "env", "sudo", "doas", "su", "runuser", "pkexec", "nohup", "time", "command", "builtin",
    "xargs", "nice", "ionice", "timeout", "watch", "stdbuf", "setsid", "chroot", "unbuffer", "script", "flock",
    "parallel", "strace", "ltrace", "taskset", "chrt", "source", ".", "trap", "coproc", "exec-env",
})
"""Programs that run another command given in their arguments: no rule, ever."""
KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
                      "do", "done", "function", "in", "!", "{", "}", "[[", "]]", "((", "))"})
EXACT_PROGRAMS = frozenset({
    "rm", "rmdir", "unlink", "mv", "cp", "ln", "install", "chmod", "chown", "chgrp", "chattr", "dd", "truncate",
    "shred", "kill", "pkill", "killall", "curl", "wget", "scp", "rsync", "ssh", "sftp", "ftp", "nc", "ncat",
    "netcat", "socat", "tee", "crontab", "mount", "umount", "find", "sed", "awk", "perl", "python", "python3",
    "node", "ruby", "php", "lua", "osascript", "open", "xdg-open",
})
"""Programs whose arguments are what they act on: a rule is the exact command only."""
RUNNER_WORDS = frozenset({"run", "exec", "x", "dlx", "shell", "eval", "foreach", "bash", "sh"})
"""Subcommand words that run a command given after them (``npm run``, ``docker exec``): exact rules only."""
SHELL_FLAGS = frozenset({"-c", "-lc", "-cl", "-ic"})

OPERATORS = {";": "`;` runs several commands", "&": "`&`/`&&` runs several commands",
             "|": "`|`/`||` runs several commands", "<": "a redirection (`<`)", ">": "a redirection (`>`)",
             "(": "a subshell or group `( … )`", ")": "a subshell or group `( … )`",
             "`": "command substitution (backticks)"}
WILDCARDS = frozenset("*?[{}")
SHELL_CHARS = frozenset(";&|<>()`$\\\"'#\n\r")


@dataclass(frozen=True, slots=True)
class Word:
    """One word after quote removal; ``expands`` when unquoted wildcards, braces or ~ may expand it."""

    text: str
    expands: bool = False


@dataclass(frozen=True, slots=True)
class Command:
    """An execute request's command as bash reads it: its words, or why it is not a simple command."""

    shown: str
    """The command as the prompt shows it."""
    words: tuple[Word, ...] = ()
    problem: str | None = None
    """Why no rule may match or be made from it (None: a simple command)."""

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(word.text for word in self.words)


@dataclass(frozen=True, slots=True)
class Scope:
    """What a rule for a command allows: ``words`` and, unless ``exact``, any further arguments."""

    words: tuple[str, ...]
    exact: bool

    def allows(self, command: Command) -> bool:
        """Whether ``command`` (simple) falls inside this scope."""
        if command.problem is not None or not self.words:
            return False
        texts = command.texts
        if self.exact:
            return texts == self.words and not any(word.expands for word in command.words)
        head = command.words[: len(self.words)]
        return tuple(w.text for w in head) == self.words and not any(w.expands for w in head)

    def describe(self) -> str:
        """``git status …`` (any further arguments) or ``ls -la`` (exactly)."""
        text = shlex.join(self.words)
        return f"`{text}` (exactly this command)" if self.exact else f"`{text} …` (with any further arguments)"


def from_input(raw_input: object) -> Command | None:
    """The command of an execute tool call's raw input (``command`` or ``cmd``), or None."""
    if not isinstance(raw_input, dict):
        return None
    for key in ("command", "cmd"):
        value = raw_input.get(key)
        if isinstance(value, (str, list)) and value:
            return parse(value)
    return None


def parse(raw: str | Sequence[object]) -> Command:
    """Read a command given as a shell string or as an argument list."""
    if isinstance(raw, str):
        return parse_shell(raw)
    items = list(raw)
    if not all(isinstance(item, str) for item in items):
        return Command(" ".join(map(str, items)), problem="its argument list holds values that are not text")
    argv = [str(item) for item in items]
    shown = shlex.join(argv)
    if len(argv) == 3 and _basename(argv[0]) in SHELLS and argv[1] in SHELL_FLAGS:
        inner = parse_shell(argv[2])
        return Command(shown, inner.words, inner.problem)
    if not argv:
        return Command(shown, problem="the command is empty")
    if any(SHELL_CHARS.intersection(arg) for arg in argv):
        return Command(shown, problem="an argument holds shell characters (it may be run through a shell)")
    return _checked(Command(shown, tuple(Word(arg, bool(WILDCARDS.intersection(arg))) for arg in argv)))


def parse_shell(text: str) -> Command:
    """Split ``text`` into words as bash would, or say why it is more than one simple command."""
    words, problem = _Lexer(text).run()
    if problem is not None:
        return Command(text, problem=problem)
    if not words:
        return Command(text, problem="the command is empty")
    return _checked(Command(text, tuple(words)))


def scope_of(command: Command) -> tuple[Scope | None, str | None]:
    """The scope an "always" answer for ``command`` stores, or None and why there is none."""
    if command.problem is not None:
        return None, command.problem
    words = command.words
    program = words[0].text
    sub: list[str] = []
    if _basename(program) not in EXACT_PROGRAMS:
        for word in words[1 : 1 + MAX_SUBCOMMAND_WORDS]:
            if word.expands or not SUBCOMMAND.match(word.text):
                break
            sub.append(word.text)
    if sub and not RUNNER_WORDS.intersection(sub):
        return Scope((program, *sub), exact=False), None
    if any(word.expands for word in words):
        return None, "it has wildcards, braces or ~: what they expand to can change"
    return Scope(command.texts, exact=True), None


def _checked(command: Command) -> Command:
    """The semantic checks after lexing: assignments, keywords, wrappers, an expanding program name."""
    first = command.words[0]
    if ASSIGNMENT.match(first.text):
        return Command(command.shown, problem=f"it sets an environment variable first (`{first.text}`)")
    if first.text in KEYWORDS:
        return Command(command.shown, problem=f"it is shell syntax (`{first.text}`)")
    if _basename(first.text) in WRAPPERS:
        return Command(command.shown, problem=f"`{first.text}` runs another command, which a rule cannot check")
    if first.expands or not first.text:
        return Command(command.shown, problem="the program name would be expanded by the shell")
    return command


def _basename(program: str) -> str:
    return program.rsplit("/", 1)[-1]


class _Lexer:
    """Bash's word splitting and quote removal for one line; stops at the first unsafe construct."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.words: list[Word] = []
        self.chars: list[str] = []
        self.started = False
        self.expands = False

    def run(self) -> tuple[list[Word], str | None]:
        try:
            while self.i < len(self.text):
                self._step(self.text[self.i])
        except _Unsafe as exc:
            return [], str(exc)
        self._end_word()
        return self.words, None

    def _step(self, char: str) -> None:
        _plain(char)
        if char in " \t":
            self._end_word()
        elif char in OPERATORS:
            raise _Unsafe(f"it has {OPERATORS[char]}")
        elif char == "#" and not self.started:
            raise _Unsafe("it has a comment (`#`)")
        elif char == "$":
            self._dollar()
        elif char == "'":
            self._single_quoted()
        elif char == '"':
            self._double_quoted()
        elif char == "\\":
            self._escaped()
        else:
            if char in WILDCARDS or (char == "~" and not self.started):
                self.expands = True  # a glob, a brace expansion or a tilde (~, ~user, ~+, ~-)
            self._add(char)
        self.i += 1

    def _add(self, char: str) -> None:
        self.chars.append(char)
        self.started = True

    def _end_word(self) -> None:
        if self.started:
            self.words.append(Word("".join(self.chars), self.expands))
        self.chars, self.started, self.expands = [], False, False

    def _dollar(self) -> None:
        following = self.text[self.i + 1 : self.i + 2]
        if following in ("", " ", "\t"):
            self._add("$")
            return
        raise _Unsafe("it expands a variable or runs a substitution (`$`)")

    def _escaped(self) -> None:
        self.i += 1
        if self.i >= len(self.text):
            raise _Unsafe("it ends with a backslash")
        char = self.text[self.i]
        _plain(char)
        self._add(char)

    def _single_quoted(self) -> None:
        end = self.text.find("'", self.i + 1)
        if end < 0:
            raise _Unsafe("it has an unterminated quote")
        self._literal(self.text[self.i + 1 : end])
        self.i = end

    def _double_quoted(self) -> None:
        self.started = True
        self.i += 1
        while self.i < len(self.text):
            char = self.text[self.i]
            if char == '"':
                return
            if char == "$" and self.text[self.i + 1 : self.i + 2] not in ('"', ""):
                raise _Unsafe("it expands a variable or runs a substitution (`$`)")
            if char == "`":
                raise _Unsafe(f"it has {OPERATORS['`']}")
            if char == "\\" and self.text[self.i + 1 : self.i + 2] in ('"', "\\", "$", "`"):
                self.i += 1
                char = self.text[self.i]
            self._literal(char)
            self.i += 1
        raise _Unsafe("it has an unterminated quote")

    def _literal(self, text: str) -> None:
        for char in text:
            _plain(char)
        self.chars.extend(text)
        self.started = True


def _plain(char: str) -> None:
    """Refuse line breaks (each line is a command) and other control characters, quoted or not."""
    if char in "\n\r":
        raise _Unsafe("it spans several lines (each line is a command)")
    if (ord(char) < 0x20 and char != "\t") or char == "\x7f":
        raise _Unsafe("it holds control characters")


class _Unsafe(Exception):
    """The command is not one simple command; the message says why."""
