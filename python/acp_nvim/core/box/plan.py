"""The box of one agent and of each command it runs, from what its config declares."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .spec import Box, Shown, environment, expand, install_folders, named_files, resolve_program

PLUGIN = str(Path(__file__).resolve().parents[3])
"""acp.nvim's own Python package folder: its demo agent and helpers run from there (read-only)."""
DEFAULT_ENV_SWITCH = "ACP_NVIM_BOX"
"""``ACP_NVIM_BOX=on`` in the editor's environment: agents that say nothing of ``box`` run boxed."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What an agent's config says of its box (``box`` in its spec), paths not yet expanded."""

    state: tuple[str, ...] = ()
    """The agent's own state folders (``~/.claude``, ``$CODEX_HOME``): read-write, made when missing."""
    paths: tuple[Shown, ...] = ()
    """More folders the user shows it."""
    passed: tuple[str, ...] = ()
    """Names of the editor's environment variables passed in."""


def default_on(editor_env: Mapping[str, str]) -> bool:
    """Whether an agent whose config does not say ``box`` runs boxed."""
    # Opt-in until every real-agent test has run boxed (stdio MCP servers, warm processes and codex's
    # node_modules now work boxed; a plain agent table without its box.state does not).
    return editor_env.get(DEFAULT_ENV_SWITCH, "").lower() in ("1", "on", "true", "yes")


def agent_box(plan: Plan, command: str, args: Sequence[str], cwd: str, roots: Iterable[str],
              agent_env: Mapping[str, str], editor_env: Mapping[str, str],
              started: Sequence[tuple[str, Sequence[str]]] = ()) -> tuple[Box, str]:
    """The agent's box and the program its command names (found on the box's PATH). ``started``: the
    programs the agent starts itself (its stdio MCP servers), shown read-only like its own."""
    env = environment(editor_env, agent_env, plan.passed)
    program = resolve_program(command, env, cwd)
    shown: list[Shown] = [Shown(PLUGIN)]
    for named, named_args in [(program, args), *((resolve_program(c, env, cwd), a) for c, a in started)]:
        shown += [Shown(folder) for folder in install_folders(named)]
        shown += [Shown(path) for path in named_files(named_args)]
    for item in plan.paths:
        path = expand(item.path, env)
        if path is not None:
            shown.append(replace(item, path=path))
    for state in plan.state:
        path = expand(state, env)
        if path is not None:
            _make_folder(path)
            shown.append(Shown(path, write=True))
    home = env.get("HOME", "")
    return Box(tuple(dict.fromkeys(os.path.realpath(root) for root in roots)), tuple(shown), home, env), program


def command_box(agent: Box, command: str, env: Iterable[tuple[str, str]]) -> Box:
    """The box of a command the agent runs: the agent's, its environment plus the command's own
    variables, and the install folders of the program it names."""
    merged = {**agent.env, **dict(env)}
    program = resolve_program(command, merged, agent.roots[0] if agent.roots else "/")
    extra = tuple(Shown(folder) for folder in install_folders(program))
    return replace(agent, shown=agent.shown + extra, env=merged)


def _make_folder(path: str) -> None:
    """A missing state folder is made (the agent writes there); a name with a suffix is a file: left."""
    if os.path.splitext(os.path.basename(path))[1]:
        return
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        pass
