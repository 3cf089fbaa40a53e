"""``:Ai login`` and ``:Ai logout``. ``:Ai login`` runs one of the agent's ``authMethods``: its own
login (``authenticate`` with the method's id) or a ``terminal`` method (the agent's command with the
method's arguments in a Neovim terminal; a new agent process then finds the login, as ACP asks:
no ``authenticate`` for a terminal method). ``env_var`` methods, which ACP's schema no longer has,
are still run for older agents that send them: each variable asked with ``inputsecret``."""

from __future__ import annotations

from acp import RequestError
from acp.schema import AuthMethodAgent, EnvVarAuthMethod, InitializeResponse, TerminalAuthMethod

from ...core.agent.process import AgentProcess
from ...core.connection import capabilities, past
from ...core.connection.auth import AuthMethod
from ...core.errors import AcpNvimError
from ...core.questions import CHOICE
from ...core.session.session import Session
from ..commands.command_context import CommandContext, CommandRequest


def cmd_login(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai login [agent]``: pick one of the agent's login methods and run it."""
    agent = request.args[0] if request.args else _agent_of(ctx)
    name, _ = ctx.manager.settings.agent(agent)
    cwd = request.cwd or ctx.nvim.funcs.getcwd()
    ctx.spawn(_login(ctx, name, cwd), f"login {name}")


def cmd_logout(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai logout``: ``logout`` of the current session's agent, where it offers it."""
    session = ctx.require_current()
    view = session.view
    if view.ended or session.process.conn is None:
        raise AcpNvimError(f"{session.key} is {view.state}: its agent is not running")
    if not capabilities.offers(view.info, "logout"):
        raise AcpNvimError(f"agent {session.agent_name!r} does not offer logout")
    ctx.spawn(_logout(ctx, session), f"logout {session.agent_name}")


def _agent_of(ctx: CommandContext) -> str | None:
    current = ctx.current()
    return current.agent_name if current is not None else None


def _live(ctx: CommandContext, agent: str) -> Session | None:
    """The current session when it is ``agent``'s, else any running session of ``agent``."""
    sessions = [s for s in [ctx.current(), *ctx.manager.sessions.values()] if s is not None]
    return next((s for s in sessions if s.agent_name == agent and not s.view.ended and s.process.conn), None)


async def _methods(ctx: CommandContext, agent: str, cwd: str) -> list[AuthMethod]:
    live = _live(ctx, agent)
    ended = [s for s in ctx.manager.sessions.values() if s.agent_name == agent and s.view.info is not None]
    if live is None and ended:
        info: InitializeResponse | None = ended[-1].view.info
    else:
        spec = ctx.manager.settings.all_agents()[agent]

        async def ask(process: AgentProcess) -> InitializeResponse | None:
            return process.info
        info = await past.with_agent(agent, spec, cwd, live.process if live else None, ask, ctx.manager.settings)
    return list(info.auth_methods or []) if info is not None else []


async def _login(ctx: CommandContext, agent: str, cwd: str) -> None:
    methods = await _methods(ctx, agent, cwd)
    if not methods:
        raise AcpNvimError(f"agent {agent!r} offers no login method")
    index = await ctx.editor.choose(f"{agent}: log in with", [_label(m) for m in methods])
    if index is None:
        return
    method = methods[index]
    if isinstance(method, TerminalAuthMethod):
        await _terminal(ctx, agent, cwd, method)
    elif isinstance(method, EnvVarAuthMethod):
        await _env_var(ctx, agent, method)
    else:
        await _authenticate(ctx, agent, method)


async def _terminal(ctx: CommandContext, agent: str, cwd: str, method: TerminalAuthMethod) -> None:
    """The agent's command with the method's arguments, in a terminal; after it exits with 0, a new
    session on a new process (one that was running before may not see the login)."""
    spec = ctx.manager.settings.all_agents()[agent]
    argv = [spec.command, *spec.args, *(method.args or [])]
    env = {**spec.env, **ctx.manager.login_env[agent], **(method.env or {})}
    code = await ctx.editor.questions.ask("", CHOICE, lambda ticket: ctx.bridge.lua_async(
        "require('acp_nvim.host.login').terminal(...)", ticket.id, argv, env, agent))
    if code != "0":
        ctx.notify(f"{agent}: {method.name} ended with {code}: not logged in", "error")
        return
    await _new_session(ctx, agent, f"{agent}: logged in with {method.name}")


async def _env_var(ctx: CommandContext, agent: str, method: EnvVarAuthMethod) -> None:
    """An older agent's ``env_var`` method: ask each variable without echo; they go only into the
    environment of the agent's new processes."""
    values: dict[str, str] = {}
    for var in method.vars:
        value = str(await ctx.bridge.lua("return require('acp_nvim.host.login').secret(...)", var.label or var.name))
        if not value and not var.optional:
            ctx.notify(f"{agent}: no value for {var.name}: not logged in", "warn")
            return
        if value:
            values[var.name] = value
    ctx.manager.login_env[agent].update(values)
    await _new_session(ctx, agent, f"{agent}: {', '.join(values)} set for its new sessions")


async def _authenticate(ctx: CommandContext, agent: str, method: AuthMethod) -> None:
    """``authenticate`` on the running session of ``agent``; without one, a new session (which logs in)."""
    live = _live(ctx, agent)
    if live is None or live.process.conn is None:
        await _new_session(ctx, agent, f"{agent}: logged in with {method.name}")
        return
    process = live.process
    try:
        await process.ask("authenticate", process.connection().authenticate(method_id=method.id),
                          limit=process.hooks.timeouts.login)
    except (RequestError, AcpNvimError) as exc:
        ctx.notify(f"{agent}: login with {method.name} failed: {exc}", "error")
        return
    ctx.notify(f"{agent}: logged in with {method.name}")


async def _new_session(ctx: CommandContext, agent: str, note: str) -> None:
    ctx.notify(f"{note}; starting a new session")
    await ctx.bridge.call(lambda _: ctx.open_chat(ctx.start(agent)))


async def _logout(ctx: CommandContext, session: Session) -> None:
    await past.logout(session.process)
    ctx.manager.login_env.pop(session.agent_name, None)
    ctx.notify(f"{session.agent_name}: logged out")


def _label(method: AuthMethod) -> str:
    kind = {TerminalAuthMethod: "in a terminal", EnvVarAuthMethod: "an environment variable",
            AuthMethodAgent: "by the agent"}.get(type(method), "")
    name = method.name or method.id
    return f"{name} ({method.description or kind})" if (method.description or kind) else name
