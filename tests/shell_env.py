"""The environment a login shell gives a program it starts in a folder: test Neovims get it too.

A Neovim started from a shell inherits ``PWD`` (the folder), ``OLDPWD`` (the one before),
``HOME``, ``SHELL``, ``TERM``, ``LANG`` and ``USER``; so does its Python host and every agent.
Tests that start Neovim without them never see what those values do (``$PWD`` names a path
that is in every tool call, prompt and log line).
"""

from __future__ import annotations

import getpass
import os
import shutil
from pathlib import Path

ENV = shutil.which("env") or "/usr/bin/env"
"""Found once, when tests start: a test may put only its own stand-ins on PATH."""


def shell_env(workspace: Path) -> dict[str, str]:
    """The variables a shell sets for a program started in ``workspace``."""
    return {
        "PWD": str(workspace),
        "OLDPWD": str(workspace.parent),
        "HOME": os.environ.get("HOME") or str(Path.home()),
        "SHELL": os.environ.get("SHELL") or shutil.which("bash") or "/bin/sh",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "USER": os.environ.get("USER") or getpass.getuser(),
    }


def shell_argv(workspace: Path, argv: list[str]) -> list[str]:
    """``argv`` run as a shell in ``workspace`` would run it (``env -C``: its cwd and variables)."""
    return [ENV, "-C", str(workspace), *(f"{name}={value}" for name, value in shell_env(workspace).items()), *argv]
