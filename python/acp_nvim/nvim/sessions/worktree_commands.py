"""``:Ai new {agent} --worktree [name]`` and ``:Ai worktree [diff|merge|remove] [name]``: a git
worktree per session (``core/worktrees``). Closing a session never touches its worktree; removing a
worktree keeps its branch and refuses while it has uncommitted changes unless the user confirms."""

from __future__ import annotations

import os

from ...core.errors import AcpNvimError
from ...core.session.session import Session
from ...core.worktrees import names
from ...core.worktrees import worktree as trees
from ...core.worktrees.merge import Merge
from ...core.worktrees.worktree import Repo, Worktree
from ..commands.command_context import CommandContext, CommandRequest

FLAG = "--worktree"
KEEP, DROP = "keep it", "remove it, losing those changes"


def new_args(args: list[str]) -> tuple[str | None, bool, str | None]:
    """``:Ai new``'s words: (agent, --worktree given, the worktree's name)."""
    if FLAG not in args:
        if len(args) > 1:
            raise AcpNvimError("usage: :Ai new [agent] [--worktree [name]]")
        return (args[0] if args else None), False, None
    at = args.index(FLAG)
    before, after = args[:at], args[at + 1:]
    if len(before) > 1 or len(after) > 1:
        raise AcpNvimError("usage: :Ai new [agent] [--worktree [name]]")
    return (before[0] if before else None), True, (names.check_name(after[0]) if after else None)


def start_in_worktree(ctx: CommandContext, agent: str | None, name: str | None, cwd: str) -> None:
    """Make the worktree (a task: git runs), then start the session in it and open its chat."""
    agent_name, _ = ctx.manager.settings.agent(agent)  # an unknown agent fails before anything is made
    ctx.spawn(_start_in_worktree(ctx, agent_name, name, cwd), "new session in a worktree")


async def _start_in_worktree(ctx: CommandContext, agent: str, name: str | None, cwd: str) -> None:
    try:
        repo = await trees.open_repo(cwd)
        made = await trees.create(repo, name, agent, ctx.manager.settings.worktrees)
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")
        return
    session = await ctx.bridge.call(lambda _: _open(ctx, agent, made))
    ctx.notify(f"{session.key} works in {made.path} on branch {made.branch} (from {made.base[:10]})")


def _open(ctx: CommandContext, agent: str, made: Worktree) -> Session:
    session = ctx.start(agent, made.path, worktree=made)
    ctx.open_chat(session)
    return session


# -- :Ai worktree ----------------------------------------------------------------------

def cmd_worktree(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai worktree [list|diff|merge|remove] [name]``."""
    verb = request.args[0] if request.args else "list"
    if verb not in VERBS or len(request.args) > 2:
        raise AcpNvimError("usage: :Ai worktree [list|diff|merge|remove] [name]")
    name = request.args[1] if len(request.args) > 1 else None
    cwd = request.cwd or ctx.nvim.funcs.getcwd()
    current = ctx.manager.book.worktree(ctx.manager.current_key or "")
    ctx.spawn(_run(ctx, verb, name, cwd, current), f"worktree {verb}")


async def _run(ctx: CommandContext, verb: str, name: str | None, cwd: str, current: Worktree | None) -> None:
    try:
        repo = await trees.open_repo(cwd)
        await VERBS[verb](ctx, repo, name, current)
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")


async def _list(ctx: CommandContext, repo: Repo, name: str | None, current: Worktree | None) -> None:
    found = await trees.list_all(repo, ctx.manager.settings.worktrees)
    if not found:
        ctx.notify(f"no worktrees in {trees.root(repo, ctx.manager.settings.worktrees)} "
                   "(:Ai new {agent} --worktree makes one)")
        return
    lines = []
    for tree in found:
        dirty = await trees.dirty(tree)
        used = _session_in(ctx, tree)
        lines.append(f"{tree.name} · {tree.branch} · {len(dirty)} uncommitted"
                     + (f" · {used.key}" if used is not None else ""))
    ctx.notify("worktrees:\n" + "\n".join(lines))


async def _diff(ctx: CommandContext, repo: Repo, name: str | None, current: Worktree | None) -> None:
    tree = await _which(ctx, repo, name, current)
    text = await trees.diff(tree)
    if not text.strip():
        ctx.notify(f"{tree.branch} has no changes against {tree.base[:10]}")
        return
    ctx.bridge.lua_async("require('acp_nvim.chat.opens').show(...)", f"acp://worktree/{tree.name}/diff",
                         text.rstrip("\n").split("\n"), "diff")


async def _merge(ctx: CommandContext, repo: Repo, name: str | None, current: Worktree | None) -> None:
    tree = await _which(ctx, repo, name, current)
    front = lambda qid: ctx.bridge.lua_async("require('acp_nvim.review').show(...)", qid)  # noqa: E731
    outcome = await Merge(repo, tree, ctx.editor, ctx.manager.questions, front).run()
    ctx.notify(outcome.words(tree.branch))


async def _remove(ctx: CommandContext, repo: Repo, name: str | None, current: Worktree | None) -> None:
    tree = await _which(ctx, repo, name, current)
    used = _session_in(ctx, tree)
    if used is not None:
        raise AcpNvimError(f"{used.key} works in {tree.name}: close it first (:Ai close), then remove the worktree")
    dirty = await trees.dirty(tree)
    if dirty:
        index = await ctx.editor.choose(f"{tree.name} has uncommitted changes ({names.summary(dirty)}): remove it?",
                                        [KEEP, DROP])
        if index != 1:
            raise AcpNvimError(f"{tree.name} kept: it has uncommitted changes ({names.summary(dirty)})")
    await trees.remove(repo, tree, force=bool(dirty))
    ctx.notify(f"removed the worktree {tree.name}; its branch {tree.branch} stays (git branch -D {tree.branch} "
               "deletes it)")


VERBS = {"list": _list, "diff": _diff, "merge": _merge, "remove": _remove}


async def _which(ctx: CommandContext, repo: Repo, name: str | None, current: Worktree | None) -> Worktree:
    """The worktree named, else the current session's, else the only one there is."""
    settings = ctx.manager.settings.worktrees
    if name is not None:
        return await trees.find(repo, settings, names.check_name(name))
    if current is not None:
        return current
    found = await trees.list_all(repo, settings)
    if len(found) == 1:
        return found[0]
    listed = ", ".join(tree.name for tree in found) or "none yet"
    raise AcpNvimError(f"name the worktree ({listed}): the current session works in none")


def _session_in(ctx: CommandContext, tree: Worktree) -> Session | None:
    return next((s for s in ctx.manager.sessions.values()
                 if (w := ctx.manager.book.worktree(s.key)) is not None
                 and os.path.realpath(w.path) == os.path.realpath(tree.path)), None)
