"""``terminal <flags> <command...>``: run a shell command through the client's ``terminal/*``.

Flags (before the command): ``--limit=N`` (outputByteLimit), ``--cwd=DIR``, ``--no-ask`` (no
permission request first: the client's own gate decides), ``--kill`` (kill it at once),
``--no-wait`` (end the turn while it runs and keep it: the session's end must kill it),
``--release-twice``, ``--id=X`` (ask the output of terminal X instead of the new one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from acp.exceptions import RequestError
from acp.helpers import start_tool_call, update_tool_call
from acp.schema import StopReason, TerminalToolCallContent, ToolCallUpdate

from .turn import Turn, error_text, fenced

TAIL_CHARS = 2000


@dataclass
class Flags:
    limit: int | None = None
    cwd: str | None = None
    ask: bool = True
    kill: bool = False
    wait: bool = True
    release_twice: bool = False
    other_id: str | None = None
    command: list[str] = field(default_factory=list)


def parse(words: list[str]) -> Flags:
    """Split leading ``--flag[=value]`` words from the command."""
    flags = Flags()
    rest = list(words)
    while rest and rest[0].startswith("--"):
        name, _, value = rest.pop(0).partition("=")
        if name == "--":
            break
        _apply(flags, name, value)
    flags.command = rest
    return flags


def _apply(flags: Flags, name: str, value: str) -> None:
    if name == "--limit":
        flags.limit = int(value)
    elif name == "--cwd":
        flags.cwd = value
    elif name == "--id":
        flags.other_id = value
    else:
        setattr(flags, {"--no-ask": "ask", "--no-wait": "wait"}.get(name, name[2:].replace("-", "_")),
                name not in ("--no-ask", "--no-wait"))


async def terminal(turn: Turn) -> StopReason:
    """Run the command in a client terminal, embed it in a tool call, report its output and exit."""
    flags = parse(turn.args)
    if not flags.command:
        await turn.say("Usage: terminal [--limit=N] [--cwd=DIR] [--no-ask] [--kill] [--no-wait] <command...>\n")
        return "end_turn"
    if not turn.terminal:
        await turn.say("The client offers no terminal: not running it.\n")
        return "end_turn"
    line = " ".join(flags.command)
    call_id = turn.session.next_tool_call_id("terminal")
    raw_input = {"command": line}
    await turn.send(start_tool_call(call_id, line, kind="execute", status="pending", raw_input=raw_input))
    if flags.ask:
        request = ToolCallUpdate(tool_call_id=call_id, title=line, kind="execute", status="pending",
                                 raw_input=raw_input)
        if await turn.ask_permission(request) == "rejected":
            await turn.send(update_tool_call(call_id, status="failed"))
            await turn.say("Command rejected\n")
            return "end_turn"
    try:
        await _run(turn, call_id, line, flags)
    except RequestError as exc:
        await turn.send(update_tool_call(call_id, status="failed"))
        await turn.say(f"terminal error: {error_text(exc)}\n")
    return "end_turn"


async def _run(turn: Turn, call_id: str, line: str, flags: Flags) -> None:
    client, sid = turn.client, turn.session_id
    created = await client.create_terminal(session_id=sid, command="sh", args=["-c", line], cwd=flags.cwd,
                                           output_byte_limit=flags.limit)
    tid = created.terminal_id
    embedded = [TerminalToolCallContent(type="terminal", terminal_id=tid)]
    await turn.send(update_tool_call(call_id, status="in_progress", content=embedded))
    if not flags.wait:
        await turn.say(f"started {tid} (left running)\n")
        return
    if flags.kill:
        await client.kill_terminal(session_id=sid, terminal_id=tid)
    exit_status = await client.wait_for_terminal_exit(session_id=sid, terminal_id=tid)
    output = await client.terminal_output(session_id=sid, terminal_id=flags.other_id or tid)
    await client.release_terminal(session_id=sid, terminal_id=tid)
    await turn.send(update_tool_call(call_id, status="completed"))
    await turn.say(f"{tid}: exit code {exit_status.exit_code} signal {exit_status.signal}; "
                   f"truncated {output.truncated}; {len(output.output.encode('utf-8'))} bytes\n")
    await turn.say(fenced(output.output[-TAIL_CHARS:]))
    if flags.release_twice:
        try:
            await client.release_terminal(session_id=sid, terminal_id=tid)
        except RequestError as exc:
            await turn.say(f"second release: {error_text(exc)}\n")
