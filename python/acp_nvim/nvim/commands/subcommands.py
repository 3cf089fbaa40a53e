"""The ``:Ai`` subcommands, defined once: name, usage, one-line help, completion, handler.

Everything else is made from this table: the dispatch in ``app.py``; the Lua table
``lua/acp_nvim/host/subcommands.lua`` that ``:Ai`` completion reads without starting the Python
host; the README's command table and the command index of ``doc/acp_nvim.txt``
(``make docs`` writes them; a test fails when they are stale).

A subcommand runs in Python (``handler``) or in Lua (``lua``: a module and a function, for
what must work before the host starts). Completion is per argument position (``Arg``):
literal words and named sources that Lua fills in at completion time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ...core.config import LOG_LEVELS
from ...core.permissions.policy import POLICIES
from ..chat.chat_commands import cmd_locations, cmd_queue, cmd_sessions
from ..chat.export_commands import cmd_export
from ..chat.paste_commands import cmd_paste
from ..checkpoints.checkpoint_commands import cmd_checkpoints, cmd_rewind
from ..files.changes import cmd_changes
from ..log.log_commands import cmd_log
from ..permissions.permission_commands import cmd_policy, cmd_rules
from ..sessions.board_commands import cmd_board
from ..sessions.history_commands import cmd_delete, cmd_fork, cmd_resume
from ..sessions.login_commands import cmd_login, cmd_logout
from ..sessions.option_commands import cmd_config, cmd_mode, cmd_model
from ..sessions.session_commands import cmd_cancel, cmd_close, cmd_new, cmd_open, cmd_restart, cmd_send
from ..sessions.worktree_commands import cmd_worktree
from .command_context import CommandContext, CommandRequest

Handler = Callable[[CommandContext, CommandRequest], None]

SOURCES = {
    "sessions": "the keys of the open sessions (demo/1, ...)",
    "modes": "the current session's mode ids",
    "agents": "`demo` and the agents of setup()",
    "files": "file names (as for :edit)",
    "registry": "the agent ids of the cached ACP registry",
    "installed": "the ids of the agents installed from the registry",
    "worktrees": "the names of the worktrees in `worktrees.folder`",
}
"""Dynamic completion sources, filled in by Lua (``lua/acp_nvim/init.lua``)."""

DEFAULT = "open"
"""What ``:Ai`` alone runs."""


@dataclass(frozen=True)
class Arg:
    """Completion of one argument: literal ``words`` and named ``sources`` (keys of ``SOURCES``).

    ``then`` maps a literal word to the arguments that follow it (``:Ai log level {level}``);
    after any other word the next ``Arg`` of the list applies.
    """

    words: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    then: Mapping[str, tuple[Arg, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [s for s in self.sources if s not in SOURCES]
        if unknown or any(word not in self.words for word in self.then):
            raise ValueError(f"bad completion spec: sources {unknown}, then {list(self.then)}")


@dataclass(frozen=True)
class Subcommand:
    """One ``:Ai`` subcommand."""

    name: str
    usage: tuple[str, ...]
    """Its argument forms, one per way to call it (``("[session]", "level [{level}]")``)."""
    help: str
    """One line: what it does (markdown/vimdoc backticks allowed)."""
    handler: Handler | None = None
    """Runs in the Python host (greenlet context: return at once, ``ctx.spawn`` agent work)."""
    lua: tuple[str, str] | None = None
    """Runs in Lua instead, without the host: ``(module, function)``, called with the words after the
    subcommand (a list)."""
    args: tuple[Arg, ...] = ()
    range: bool = False
    """Takes a range (``:[range]Ai send``)."""
    expand: bool = False
    """``%``, ``#`` and ``#n`` (with ``:p`` and the other modifiers) in the text expand as for :edit."""

    def __post_init__(self) -> None:
        if (self.handler is None) == (self.lua is None):
            raise ValueError(f"subcommand {self.name!r}: give exactly one of handler and lua")

    def forms(self) -> list[str]:
        """How it is typed, one string per argument form (``:[range]Ai send {text}``)."""
        head = f":{'[range]' if self.range else ''}Ai {self.name}"
        return [f"{head} {form}".rstrip() for form in self.usage]


def _words(*words: str) -> Arg:
    return Arg(words=words)


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("open", ("[session]",),
               "open the chat of [session], or of the current session (starting the default agent); "
               "`:Ai` alone does this", cmd_open, args=(Arg(sources=("sessions",)),)),
    Subcommand("toggle", ("",), "hide the tab's chat column, or show it again with the current session's chat; "
               "the sessions keep running", lua=("acp_nvim.chat.toggle", "toggle")),
    Subcommand("send", ("{text}",),
               "send a prompt; a range attaches the lines as context, `@path` a file, and `%`, `%:p`, `#` "
               "expand to file names as for `:edit`", cmd_send, range=True, expand=True),
    Subcommand("paste", ("[text]",),
               "attach the clipboard's image: to the chat's prompt, or sent at once with [text]", cmd_paste),
    Subcommand("cancel", ("",), "cancel the running turn; pending permission requests are answered `cancelled`",
               cmd_cancel),
    Subcommand("new", ("[agent] [--worktree [name]]",),
               "start another session, of [agent] or the default agent; `--worktree` starts it in a new git "
               "worktree of its own, on a new branch from HEAD", cmd_new,
               args=(Arg(words=("--worktree",), sources=("agents",), then={"--worktree": ()}),
                     Arg(words=("--worktree",), then={"--worktree": ()}))),
    Subcommand("close", ("",), "stop the current session's agent", cmd_close),
    Subcommand("restart", ("",), "a fresh agent process for the current session (after a crash or a hang)",
               cmd_restart),
    Subcommand("sessions", ("",), "pick a session (`vim.ui.select`) and open its chat", cmd_sessions),
    Subcommand("board", ("",), "every session in one live buffer: state, what waits for you, activity, "
               "tokens, changed files, branch; keys act on the session under the cursor", cmd_board),
    Subcommand("next", ("",), "go to the next session waiting for you (a review, prompt or question): "
               "what it waits on, else its chat", lua=("acp_nvim.board", "next")),
    Subcommand("prev", ("",), "go to the previous session waiting for you", lua=("acp_nvim.board", "prev")),
    Subcommand("worktree", ("[list]", "diff [name]", "merge [name]", "remove [name]"),
               "the session's git worktree: list them, its diff against where it started, merge it into the "
               "checkout through a review, remove it (its branch stays)", cmd_worktree,
               args=(Arg(words=("list", "diff", "merge", "remove"),
                         then={"diff": (Arg(sources=("worktrees",)),), "merge": (Arg(sources=("worktrees",)),),
                               "remove": (Arg(sources=("worktrees",)),)}),)),
    Subcommand("resume", ("", "last", "{session-id}"),
               "reopen a past session of this folder (picker of every agent's sessions and the local history), "
               "the default agent's last one, or {session-id}", cmd_resume, args=(_words("last"),)),
    Subcommand("fork", ("",), "fork the current session (`session/fork`) into a new chat", cmd_fork),
    Subcommand("delete", ("", "{session-id}"), "delete a past session: in the agent where it offers it, and "
               "from the local history", cmd_delete),
    Subcommand("login", ("[agent]",), "log in to [agent] or the current session's agent with one of its methods "
               "(its own, a terminal, an environment variable typed without echo)", cmd_login,
               args=(Arg(sources=("agents",)),)),
    Subcommand("logout", ("",), "log out of the current session's agent, where it offers it", cmd_logout),
    Subcommand("mode", ("[mode]",), "pick or switch the agent's mode", cmd_mode,
               args=(Arg(sources=("modes",)),)),
    Subcommand("model", ("[value]",), "pick or set the agent's model", cmd_model),
    Subcommand("config", ("[option [value]]",), "pick or set any of the agent's config options", cmd_config),
    Subcommand("queue", ("[show|edit|clear]",), "the prompts waiting for the running turn to end: list, "
               "edit or drop them", cmd_queue, args=(_words("show", "edit", "clear"),)),
    Subcommand("locations", ("",), "every tool call location of the session to the quickfix list",
               cmd_locations),
    Subcommand("export", ("{file}",), "the session's transcript as Markdown, each message under its heading with "
               "the agent's message id in an HTML comment (mode 0600, redacted)", cmd_export,
               args=(Arg(sources=("files",)),)),
    Subcommand("permissions", ("",), "show the pending permission requests and reviews again",
               lua=("acp_nvim.question.permission", "show")),
    Subcommand("questions", ("",), "list the agents' open questions (forms, links to open) and open one",
               lua=("acp_nvim.question", "show")),
    Subcommand("policy", (f"[{'|'.join(POLICIES)}]",), "show or set the session's permission policy",
               cmd_policy, args=(_words(*POLICIES),)),
    Subcommand("rules", ("", "remove {n}"), "list the remembered \"always\" answers, or forget rule {n}",
               cmd_rules, args=(_words("remove"),)),
    Subcommand("changes", ("", "revert {file}"),
               "the files the agent changed in the turn: diff, revert a hunk or a file; `revert` puts {file} "
               "back as it was before the turn", cmd_changes, expand=True,
               args=(Arg(words=("revert",), then={"revert": (Arg(sources=("files",)),)}),)),
    Subcommand("checkpoints", ("",), "the turns of the session, newest first, each a checkpoint: `<CR>` its diff, "
               "`r` rewind to before it, `e` edit its prompt and run it again, `u` undo the last rewind",
               cmd_checkpoints),
    Subcommand("rewind", ("[turn]", "undo"), "files and conversation back to before turn [turn] (the last one "
               "without a number); `undo` puts back what the last rewind replaced", cmd_rewind,
               args=(_words("undo"),)),
    Subcommand("deps", ("",), "make or upgrade the private venv of the Python dependencies (`uv`, else "
               "`python3 -m venv` and pip), which the Python host then starts from; needs no Python package",
               lua=("acp_nvim.host.deps", "run")),
    Subcommand("agents", ("",), "pick an agent of the ACP registry (name, description, version, installed or "
               "not, distribution kind); picking one installs it", lua=("acp_nvim.presets.registry", "pick")),
    Subcommand("install", ("{id}",), "install agent {id} of the ACP registry under `stdpath('data')`; "
               "`:Ai new {id}` then starts it, no setup() line needed", lua=("acp_nvim.presets.registry", "install"),
               args=(Arg(sources=("registry",)),)),
    Subcommand("update", ("[id]",), "update the installed agents (or [id]) to the registry's version",
               lua=("acp_nvim.presets.registry", "update"), args=(Arg(sources=("installed",)),)),
    Subcommand("uninstall", ("{id}",), "remove agent {id} installed from the registry",
               lua=("acp_nvim.presets.registry", "uninstall"), args=(Arg(sources=("installed",)),)),
    Subcommand("log", ("[session]", "level [{level}]", "export {file}"),
               "the session's protocol log buffer; show or set its level; export it (replayable)", cmd_log,
               args=(Arg(words=("export", "level"), sources=("sessions",),
                         then={"level": (_words(*LOG_LEVELS),), "export": (Arg(sources=("files",)),)}),)),
)

BY_NAME: dict[str, Subcommand] = {sub.name: sub for sub in SUBCOMMANDS}


def handler_of(name: str) -> Handler | None:
    """The Python handler of subcommand ``name`` (None for unknown and Lua-side subcommands)."""
    sub = BY_NAME.get(name)
    return sub.handler if sub is not None else None
