"""The shell reading of commands checked against a real bash (tests/unit/test_rule_table.py holds the table)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rule_table import APPROVED, MUST_MATCH

from acp_nvim.core.permissions.command import Command, parse_shell

# -- the lexer against bash -------------------------------------------------------------------

BASH = shutil.which("bash")
SIMPLE = [c for c in [*APPROVED, *MUST_MATCH] if "*" not in c]


def bash_words(command: str) -> list[str]:
    """The words bash passes for ``command`` (globs and braces off, no program of PATH can run)."""
    script = f"set -f +B; printf '%s\\0' {command}"
    done = subprocess.run([BASH, "--norc", "--noprofile", "-c", script], capture_output=True, timeout=10,
                          env={"PATH": "/nonexistent", "HOME": "~"}, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("command", SIMPLE)
def test_simple_commands_split_as_bash_splits_them(command):
    assert list(parse_shell(command).texts) == bash_words(command)


TRICKY = st.text(alphabet="ab '\"\\*?[]{}~#=-,./;|&<>()$`\n\t", max_size=14)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(TRICKY)
def test_whatever_is_read_as_one_simple_command_is_one_for_bash(command):
    parsed: Command = parse_shell(command)
    if parsed.problem is None:
        assert list(parsed.texts) == bash_words(command), parsed
