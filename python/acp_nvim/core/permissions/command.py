"""Execute commands read the way bash reads them, so "always" rules allow no more than the user saw.

A rule may only come from, and only match, a *simple* command: one program and its words, as bash
would pass them after quote removal. Anything that could run more than what the words show —
operators (``;`` ``&&`` ``||`` ``|`` ``&``), redirections, ``$(…)``, backticks, ``$VAR``,
subshells and ``{ …; }``, newlines, comments, ``X=… cmd`` — makes the command *complex*: it never
matches a rule and never creates one. So do wrappers that run another command (``bash -c``,
``sudo``, ``env``, ``xargs``, ``eval``, ``exec``, ``nohup``, ``time``, ``command``, ``builtin``, …),
a program name that bash would expand (wildcards, braces), an option that runs code or writes
elsewhere (``exec_tables.NEVER``) and an environment variable other than ``exec_tables.SAFE_ENV``.

Rules default to the exact command (word for word, nothing more). A *scope* rule exists only for
the read-only programs of ``exec_tables.SCOPED`` (``git status``, ``ls``, …): it stores the program,
its subcommand words and the options shown, and admits those options (or fewer) with any further
plain words (``plain_word``: no option, URL, absolute or parent path, nothing a glob expands). An
exact command with wildcards gets no rule (what they match changes). A rule for a workspace script
(``./run-tests.sh``, ``python scripts/x.py``) is bound to the script's content (``scripts_of``).

An agent that sends its command as an argument list gets those words as they are (no shell);
the list ``[bash, -lc, SCRIPT]`` (Codex wraps every command so) is read as SCRIPT when the shell
is ``sh`` or ``bash`` by name or from ``/bin``/``/usr/bin`` (``shell_script``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from .exec_tables import (
    INTERPRETERS,
    NEVER,
    RUNS_WORKSPACE_CODE,
    SCOPED,
    changes_what_runs,
    never_option,
    plain_word,
    safe_env,
)

MAX_SUBCOMMAND_WORDS = 2
MAX_SCRIPT_BYTES = 1024 * 1024
MAX_PATH_WORDS = 256
"""A command with more words than this is not checked word by word: no rule admits it."""
SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_:-]*$")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
                    "pwsh", "powershell"})
SCRIPT_SHELLS = frozenset({"sh", "bash"})
"""The shells whose ``-c SCRIPT`` is read as SCRIPT (they read a simple command as bash does)."""
SYSTEM_DIRS = ("/bin/", "/usr/bin/")
WRAPPERS = SHELLS | frozenset({
    "eval", "exec", "env", "sudo", "doas", "su", "runuser", "pkexec", "nohup", "time", "command", "builtin",
    "xargs", "nice", "ionice", "timeout", "watch", "stdbuf", "setsid", "chroot", "unbuffer", "script", "flock",
    "parallel", "strace", "ltrace", "taskset", "chrt", "source", ".", "trap", "coproc", "exec-env",
})
"""Programs that run another command given in their arguments: no rule, ever."""
KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
                      "do", "done", "function", "in", "!", "{", "}", "[[", "]]", "((", "))"})
RUNNER_WORDS = frozenset({"run", "exec", "x", "dlx", "shell", "eval", "foreach", "bash", "sh"})
"""Subcommand words that run a command given after them (``npm run``, ``docker exec``)."""
SHELL_FLAG_LISTS = (("-c",), ("-lc",), ("-cl",), ("-l", "-c"))

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
    cwd: str | None = None
    """The folder the request names (scripts are found from it), if any."""

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(word.text for word in self.words)


def options_of(words: Sequence[str]) -> tuple[str, ...]:
    return tuple(word for word in words if word.startswith("-") and len(word) > 1)


@dataclass(frozen=True, slots=True)
class Scope:
    """What a rule for a command allows.

    Exact: ``words`` and nothing more. Otherwise ``words`` is a program of ``SCOPED`` and its
    subcommand words; the rule admits any of ``options`` (as shown) and further plain words.
    """

    words: tuple[str, ...]
    exact: bool
    options: tuple[str, ...] = ()

    def allows(self, command: Command) -> bool:
        """Whether ``command`` (simple) falls inside this scope."""
        if command.problem is not None or not self.words or never_in(command.texts):
            return False
        texts = command.texts
        if self.exact:
            return texts == self.words and not any(word.expands for word in command.words)
        if tuple(self.words) not in SCOPED or texts[: len(self.words)] != self.words:
            return False
        return all(not word.expands and (word.text in (*self.options, "--") or plain_word(word.text))
                   for word in command.words[len(self.words):])

    @property
    def widens(self) -> str | None:
        """Why this scope allows more than a rule may (None: it is no wider)."""
        if not self.words:
            return "an execute rule must name a command"
        never = never_in(self.words + self.options)
        if never:
            return f"`{never}` runs code or writes elsewhere"
        if not self.exact and tuple(self.words) not in SCOPED:
            return f"`{shlex.join(self.words)}` with further arguments is not a read-only command"
        return None

    def describe(self) -> str:
        """``git status -s …`` (further plain words) or ``ls -la`` (exactly)."""
        if self.exact:
            return f"`{shlex.join(self.words)}` (exactly this command)"
        text = shlex.join((*self.words, *self.options))
        return f"`{text} …` (with further file or ref names; no other option, no path outside, no link)"

    def runs_workspace_code(self) -> str | None:
        """What workspace code the program runs, when it does (the confirmation says so)."""
        program = _basename(self.words[0]) if self.words else ""
        what = RUNS_WORKSPACE_CODE.get(program)
        return f"`{program}` runs code from the workspace ({what}), which the agent can change" if what else None


def path_problem(word: str, cwd: str | None, workspace: str) -> str | None:
    """Why ``word``, read as a path, is not one a rule admits (None: it is not a link, it has no link
    on the way and it stays inside the workspace, or it names nothing).

    Resolved without following links, as it is now: every component below the workspace root is
    ``lstat``ed in turn (a ``..`` after a link would go where the link points, so none is allowed),
    and a file with other names (hard links) may be a file outside. The folders above the root are
    the user's own layout and may be links."""
    if not word or "\0" in word:
        return None
    root = os.path.normpath(workspace)
    base = cwd if cwd and os.path.isabs(cwd) else root
    joined = os.path.join(base, word)
    inside = root.rstrip("/") + "/"
    real = os.path.realpath(root).rstrip("/") + "/"  # a folder named by its real path (terminals are)
    if real != inside and (joined + "/").startswith(real):
        joined = inside + joined[len(real):]
    current, entered = "/", False
    info: os.stat_result | None = None
    for part in joined.split("/"):
        if part in ("", "."):
            continue
        current = os.path.dirname(current) if part == ".." else os.path.join(current, part)
        if not current.startswith(inside):
            if entered:  # it left the workspace on the way: where it lands depends on the root
                return f"`{word}` leads outside the workspace ({current})" if os.path.lexists(joined) else None
            info = None
            continue
        entered = True
        try:
            info = os.lstat(current)
        except OSError:
            return None  # nothing by that name: nothing to read
        if stat.S_ISLNK(info.st_mode):
            try:
                target = os.readlink(current)
            except OSError:
                target = "?"
            return f"`{word}` is a link ({os.path.relpath(current, root)} → {target})"
    if current != root and not current.startswith(inside):
        return f"`{word}` leads outside the workspace ({current})" if os.path.lexists(joined) else None
    if info is not None and not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
        return f"`{word}` has {info.st_nlink} names (hard links): it may be a file outside the workspace"
    return None


def path_problems(command: Command, workspace: str) -> list[str]:
    """``path_problem`` of each word after the program (an option's value after ``=`` included)."""
    if len(command.texts) > MAX_PATH_WORDS:
        return [f"it has more than {MAX_PATH_WORDS} words: its paths are not checked one by one"]
    problems = []
    for text in command.texts[1:]:
        if text.startswith("-"):
            if "=" not in text:
                continue
            text = text.split("=", 1)[1]
        problem = path_problem(text, command.cwd, workspace)
        if problem:
            problems.append(problem)
    return problems


def never_in(words: Sequence[str]) -> str | None:
    """The first option of ``words`` that never matches a rule (per the program's table), if any."""
    if not words:
        return None
    program = _basename(words[0])
    for word in words[1:]:
        found = never_option(program, word)
        if found:
            return found
        if program in NEVER and ("://" in word or "::" in word):
            return word
    return None


def from_input(raw_input: object) -> Command | None:
    """The command of an execute tool call's raw input (``command`` or ``cmd``), or None.

    Its ``env`` and ``cwd`` count: an environment variable outside ``SAFE_ENV`` makes it complex.
    """
    if not isinstance(raw_input, dict):
        return None
    for key in ("command", "cmd"):
        value = raw_input.get(key)
        if isinstance(value, (str, list)) and value:
            command = parse(value)
            cwd = raw_input.get("cwd")
            problem = command.problem or env_problem(raw_input.get("env"))
            return Command(command.shown, command.words, problem, cwd if isinstance(cwd, str) else None)
    return None


def env_pairs(env: object) -> list[tuple[str, str]] | None:
    """An ``env`` input as (name, value) pairs: a mapping or a list of ``{name, value}`` (None: neither)."""
    if env is None:
        return []
    if isinstance(env, dict):
        items = list(env.items())
    elif isinstance(env, list):
        items = [(v.get("name"), v.get("value")) if isinstance(v, dict) else (None, None) for v in env]
    else:
        return None
    if not all(isinstance(name, str) and isinstance(value, str) for name, value in items):
        return None
    return [(str(name), str(value)) for name, value in items]


def env_problem(env: object) -> str | None:
    """Why a request's environment keeps it from matching a rule (None: none, or only ``SAFE_ENV``)."""
    pairs = env_pairs(env)
    if pairs is None:
        return "its environment is not a list of names and values"
    risky = [name for name, _ in pairs if changes_what_runs(name)]
    if risky:
        return f"it sets {', '.join(risky)}, which changes what runs"
    other = [name for name, _ in pairs if not safe_env(name)]
    if other:
        return f"it sets environment variables ({', '.join(other)})"
    return None


def shell_script(argv: Sequence[str]) -> str | None:
    """SCRIPT when ``argv`` is ``sh -c SCRIPT`` or ``bash -c SCRIPT`` (or ``-lc``), the shell by name
    or from ``/bin``/``/usr/bin``; else None."""
    if len(argv) < 3 or _basename(argv[0]) not in SCRIPT_SHELLS:
        return None
    if "/" in argv[0] and not argv[0].startswith(SYSTEM_DIRS):
        return None
    if tuple(argv[1:-1]) not in SHELL_FLAG_LISTS:
        return None
    return argv[-1]


def parse(raw: str | Sequence[object]) -> Command:
    """Read a command given as a shell string or as an argument list."""
    if isinstance(raw, str):
        return parse_shell(raw)
    items = list(raw)
    if not all(isinstance(item, str) for item in items):
        return Command(" ".join(map(str, items)), problem="its argument list holds values that are not text")
    argv = [str(item) for item in items]
    shown = shlex.join(argv)
    script = shell_script(argv)
    if script is not None:
        inner = parse_shell(script)
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
    never = never_in(command.texts)
    if never:
        return None, f"`{never}` runs code or writes elsewhere"
    words = command.words
    program = words[0].text
    sub: list[str] = []
    for word in words[1 : 1 + MAX_SUBCOMMAND_WORDS]:
        if word.expands or not SUBCOMMAND.match(word.text) or (program, *sub) in SCOPED:
            break
        sub.append(word.text)
    head = (program, *sub)
    if head in SCOPED and not RUNNER_WORDS.intersection(sub):
        rest = words[len(head):]
        if not any(word.expands for word in rest):
            return Scope(head, exact=False, options=tuple(dict.fromkeys(options_of([w.text for w in rest])))), None
    if any(word.expands for word in words):
        return None, "it has wildcards, braces or ~: what they expand to can change"
    return Scope(command.texts, exact=True), None


@dataclass(frozen=True, slots=True)
class ScriptRead:
    """A workspace script a command runs, read once: the word that names it, its path, the sha256 of
    the bytes read ("" when missing, "too large" past ``MAX_SCRIPT_BYTES``) and those bytes (None then).
    A rule is matched against these bytes, and the command then runs a copy of them (``approved.py``)."""

    word: str
    path: str
    digest: str
    data: bytes | None


def script_indices(words: Sequence[str]) -> tuple[int, ...]:
    """Which of ``words`` may name a script: the program when it is a path (``./x.sh``), and an
    interpreter's first non-option argument (``python scripts/x.py``)."""
    if not words:
        return ()
    found = [0] if "/" in words[0] else []
    if _basename(words[0]) in INTERPRETERS:
        found += [index for index, word in enumerate(words) if index and not word.startswith("-")][:1]
    return tuple(found)


def script_targets(words: Sequence[str], cwd: str | None, workspace: str) -> tuple[tuple[int, str], ...]:
    """``script_indices`` whose word names a path inside the workspace, with that path (normalized)."""
    base = cwd if cwd and os.path.isabs(cwd) else workspace
    inside = workspace.rstrip("/") + "/"
    targets = ((index, os.path.normpath(os.path.join(base, words[index]))) for index in script_indices(words))
    return tuple((index, path) for index, path in targets if path.startswith(inside))


def script_paths(words: Sequence[str], cwd: str | None, workspace: str) -> tuple[str, ...]:
    """The workspace scripts ``words`` runs (``script_targets``' paths)."""
    return tuple(path for _, path in script_targets(words, cwd, workspace))


def read_scripts(words: Sequence[str], cwd: str | None, workspace: str) -> tuple[ScriptRead, ...]:
    """Each workspace script ``words`` runs, read once (blocking: call in a thread)."""
    return tuple(_read(words[index], path) for index, path in script_targets(words, cwd, workspace))


def scripts_of(words: Sequence[str], cwd: str | None, workspace: str) -> tuple[tuple[str, str], ...]:
    """``script_paths``, each with the sha256 of its content now ("" when missing). Reads the files."""
    return tuple((read.path, read.digest) for read in read_scripts(words, cwd, workspace))


def _read(word: str, path: str) -> ScriptRead:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_SCRIPT_BYTES + 1)
    except OSError:
        return ScriptRead(word, path, "", None)
    if len(data) > MAX_SCRIPT_BYTES:
        return ScriptRead(word, path, "too large", None)
    return ScriptRead(word, path, hashlib.sha256(data).hexdigest(), data)


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
