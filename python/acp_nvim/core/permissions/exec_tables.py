"""The tables behind execute rules: which programs a scope rule may widen, the options that never
match a rule, the programs that run workspace code, and the environment names that change what runs.

A *scope* rule (``git status …``) exists only for the programs of ``SCOPED``: read-only commands
whose further non-option words (file names, refs, patterns) cannot make them run or write anything
else. Every other command gets an exact rule. ``NEVER`` lists, per program, the options that run code
or write elsewhere: a command holding one never matches a rule and never makes one (short options
count inside a cluster, ``-nO``; long ones by any prefix, ``--out=x``, as getopt and git accept them).
"""

from __future__ import annotations

import re

SCOPED: frozenset[tuple[str, ...]] = frozenset({
    *(("git", sub) for sub in ("status", "log", "diff", "show", "blame", "grep", "ls-files", "shortlog",
                               "describe", "rev-parse", "ls-tree", "whatchanged")),
    ("git", "stash", "list"), ("git", "stash", "show"),
    ("ls",), ("cat",), ("head",), ("tail",), ("wc",), ("grep",), ("rg",),
})
"""Program and subcommand words whose rule may admit further non-option words. Left out on purpose:
``git branch``/``tag``/``stash``/``reflog``/``remote`` (a further word creates or deletes),
``find`` (``-exec``), ``sed``/``awk`` (scripts), ``tree`` (``-o`` writes), everything that builds or tests."""

GIT_NEVER_SHORT = frozenset("OocC")
GIT_NEVER_LONG = ("open-files-in-pager", "output", "output-directory", "ext-diff", "textconv", "exec",
                  "upload-pack", "receive-pack", "config", "config-env", "git-dir", "work-tree", "exec-path",
                  "namespace", "super-prefix", "no-index", "prefix", "contents", "ignore-revs-file", "file")
NEVER: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "git": (GIT_NEVER_SHORT, GIT_NEVER_LONG),
    "grep": (frozenset("f"), ("file", "exclude-from", "devices")),
    "rg": (frozenset("fz"), ("pre", "pre-glob", "file", "ignore-file", "search-zip", "hostname-bin")),
    "ls": (frozenset(), ()),
    "cat": (frozenset(), ()),
    "head": (frozenset(), ()),
    "tail": (frozenset(), ()),
    "wc": (frozenset(), ("files0-from",)),
}
"""Per program: short option letters and long option names that run code or read/write elsewhere."""
ANY_NEVER_LONG = ("output", "exec", "config", "upload-pack", "prefix", "file", "ext-diff")
"""Checked for every program with an exact rule too: the agent should not be able to store them."""

RUNS_WORKSPACE_CODE: dict[str, str] = {
    "make": "its Makefile", "gmake": "its Makefile", "just": "its justfile", "cargo": "build scripts and tests",
    "go": "tests, generators and build code", "pytest": "tests and conftest.py", "tox": "tox.ini and tests",
    "nox": "noxfile.py", "npm": "package.json scripts", "npx": "packages' bin scripts", "yarn": "package.json scripts",
    "pnpm": "package.json scripts", "bun": "package.json scripts", "deno": "its tasks",
    "gradle": "build.gradle", "gradlew": "build.gradle", "mvn": "pom.xml plugins", "rake": "its Rakefile",
    "bundle": "its Gemfile", "poetry": "pyproject.toml scripts", "uv": "pyproject.toml", "pip": "setup scripts",
    "pip3": "setup scripts", "cmake": "CMakeLists.txt", "ninja": "build.ninja", "meson": "meson.build",
    "mix": "mix.exs", "dotnet": "project files", "swift": "Package.swift", "composer": "composer.json scripts",
    "python": "the script", "python3": "the script", "node": "the script", "ruby": "the script",
    "perl": "the script", "php": "the script", "lua": "the script",
}
"""Programs that run code from the workspace (which the agent can change): their rules say so."""
INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "php", "lua", "deno", "bun", "tsx",
                          "ts-node", "Rscript"})
"""Programs whose first non-option argument is a script they run (bound to its content like ``./x.sh``)."""

SAFE_ENV = frozenset({"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "FORCE_COLOR", "COLUMNS", "LINES", "LANG",
                      "LANGUAGE", "TZ", "CI"})
"""Environment names a request may set and still match a rule (besides ``LC_*``): nothing else does."""
CHANGES_WHAT_RUNS = frozenset({
    "PATH", "BASH_ENV", "ENV", "NODE_OPTIONS", "NODE_PATH", "RUBYOPT", "RUBYLIB", "PAGER", "EDITOR", "VISUAL",
    "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "IFS", "ZDOTDIR", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS", "LESSOPEN", "LESSCLOSE", "CDPATH", "GLOBIGNORE", "HOME", "XDG_CONFIG_HOME", "MAKEFLAGS",
    "MFLAGS", "GNUMAKEFLAGS", "PERLLIB", "RUSTC_WRAPPER", "RUSTFLAGS", "GCONV_PATH", "SSH_ASKPASS", "TERMINFO",
    "SHELL", "INPUTRC", "BROWSER", "MANPAGER",
})
CHANGES_PREFIXES = ("LD_", "DYLD_", "GIT_", "PYTHON", "PERL5", "BASH_FUNC_", "NPM_CONFIG_", "CARGO_", "RUSTUP_",
                    "LUA_", "GEM_", "BUNDLE_", "PIP_", "UV_")
ASSIGNABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def changes_what_runs(name: str) -> bool:
    """Whether an environment variable named ``name`` can change which program runs or what it runs."""
    upper = name.upper()
    return (upper in CHANGES_WHAT_RUNS or upper.startswith(CHANGES_PREFIXES) or upper.endswith("_PAGER")
            or not ASSIGNABLE.match(name))


def safe_env(name: str) -> bool:
    """Whether a request setting ``name`` may still be answered by a rule."""
    return name in SAFE_ENV or (name.startswith("LC_") and ASSIGNABLE.match(name) is not None)


def never_option(program: str, word: str) -> str | None:
    """The option of ``word`` that never matches a rule for ``program`` (None: it is not one)."""
    short, long = NEVER.get(program, (frozenset(), ()))
    if word.startswith("--") and len(word) > 2:
        name = word[2:].split("=", 1)[0]
        found = next((o for o in (*long, *ANY_NEVER_LONG) if o.startswith(name)), None)
        return f"--{found}" if found else None
    if word.startswith("-") and len(word) > 1:
        return next((f"-{c}" for c in word[1:] if c in short), None)
    return None


def plain_word(word: str) -> bool:
    """Whether a further word may widen a scope rule: not an option, a URL, an absolute or parent path."""
    return not (word.startswith(("-", "/", "~")) or "://" in word or "::" in word or ".." in word.split("/")
                or re.match(r"^[^/:]*@[^/:]*:", word) is not None or word == "")
