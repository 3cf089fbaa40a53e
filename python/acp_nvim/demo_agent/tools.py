"""Scenarios built around tool calls: file reads, edits, shell commands, odd updates."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from acp.exceptions import RequestError
from acp.helpers import (
    start_read_tool_call,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_tool_call,
)
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    StopReason,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
)

from .edits import demo_edit, first_line, new_file_text, snippet_edit
from .turn import Turn, error_text, fenced

PIECE_DELAY = 0.01


@dataclass(frozen=True)
class FileEdit:
    """One file change: what the diff shows and what actually gets written."""

    path: str
    write_text: str
    diff_old: str | None
    diff_new: str


async def _usage(turn: Turn, syntax: str) -> StopReason:
    await turn.say(f"Usage: {syntax}\n")
    return "end_turn"


def _text_content(text: str) -> list:
    return [tool_content(text_block(text))]


async def read(turn: Turn) -> StopReason:
    """``read <path>``: read a file via fs/read_text_file (or disk) and quote it."""
    if not turn.args:
        return await _usage(turn, "read <abs-path>")
    path = turn.resolve(turn.args[0])
    call_id = turn.session.next_tool_call_id("read")
    await turn.send(start_read_tool_call(call_id, f"Read {path}", path))
    await turn.send(update_tool_call(call_id, status="in_progress"))
    try:
        content = await turn.read_text(path)
    except (RequestError, OSError) as exc:
        await turn.send(update_tool_call(call_id, status="failed", content=_text_content(error_text(exc))))
        await turn.say(f"Could not read {path}: {error_text(exc)}\n")
        return "end_turn"
    await turn.send(update_tool_call(call_id, status="completed", content=_text_content(content)))
    if not turn.client_reads:
        await turn.say("(The client did not advertise fs.readTextFile, so I read the disk myself.)\n\n")
    await turn.say(f"Contents of `{path}`:\n\n{fenced(content)}")
    return "end_turn"


async def _read_all(turn: Turn, paths: list[str]) -> dict[str, str] | None:
    """Read every path; on failure tell the user and return None."""
    texts: dict[str, str] = {}
    for path in paths:
        try:
            texts[path] = await turn.read_text(path)
        except (RequestError, OSError) as exc:
            await turn.say(f"Could not read {path}: {error_text(exc)}\n")
            return None
    return texts


async def _apply(turn: Turn, call_id: str, edits: list[FileEdit], via_client: bool) -> StopReason:
    """Write every edit, then complete (or fail) the tool call."""
    await turn.send(update_tool_call(call_id, status="in_progress"))
    try:
        for edit in edits:
            await turn.write_text(edit.path, edit.write_text, via_client=via_client)
    except (RequestError, OSError) as exc:
        await turn.send(update_tool_call(call_id, status="failed", content=_text_content(error_text(exc))))
        await turn.say(f"Edit failed: {error_text(exc)}\n")
        return "end_turn"
    await turn.send(update_tool_call(call_id, status="completed"))
    await turn.say("\n".join(f"Edited {edit.path}" for edit in edits))
    return "end_turn"


async def _edit_flow(turn: Turn, title: str, edits: list[FileEdit], *, via_client: bool) -> StopReason:
    """Announce one edit tool call with a diff per file, ask permission, then write."""
    call_id = turn.session.next_tool_call_id("edit")
    content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent] = [
        tool_diff_content(e.path, e.diff_new, e.diff_old) for e in edits
    ]
    locations = [ToolCallLocation(path=e.path) for e in edits]
    raw_input = {"paths": [e.path for e in edits]}
    await turn.send(
        start_tool_call(
            call_id,
            title,
            kind="edit",
            status="pending",
            content=content,
            locations=locations,
            raw_input=raw_input,
        )
    )
    request = ToolCallUpdate(
        tool_call_id=call_id, title=title, kind="edit", status="pending", content=content, locations=locations
    )
    if await turn.ask_permission(request) == "rejected":
        await turn.send(update_tool_call(call_id, status="failed"))
        await turn.say("Edit rejected")
        return "end_turn"
    return await _apply(turn, call_id, edits, via_client)


async def _single_edit(turn: Turn, *, snippet: bool, via_client: bool, syntax: str) -> StopReason:
    if not turn.args:
        return await _usage(turn, syntax)
    path = turn.resolve(turn.args[0])
    texts = await _read_all(turn, [path])
    if texts is None:
        return "end_turn"
    old = texts[path]
    if snippet:
        edit = FileEdit(path, snippet_edit(old, path), first_line(old), first_line(snippet_edit(old, path)))
    else:
        edit = FileEdit(path, demo_edit(old, path), old, demo_edit(old, path))
    return await _edit_flow(turn, f"Edit {path}", [edit], via_client=via_client)


async def edit(turn: Turn) -> StopReason:
    """``edit <path>``: full-file diff, permission, write via fs/write_text_file."""
    return await _single_edit(turn, snippet=False, via_client=True, syntax="edit <abs-path>")


async def edit_disk(turn: Turn) -> StopReason:
    """``edit-disk <path>``: like edit, but the agent writes the disk itself."""
    return await _single_edit(turn, snippet=False, via_client=False, syntax="edit-disk <abs-path>")


async def edit_snippet(turn: Turn) -> StopReason:
    """``edit-snippet <path>``: diff carries only line 1; the agent writes the disk itself."""
    return await _single_edit(turn, snippet=True, via_client=False, syntax="edit-snippet <abs-path>")


async def multi_edit(turn: Turn) -> StopReason:
    """``multi-edit <path>...``: one tool call, one diff per file, one permission."""
    if not turn.args:
        return await _usage(turn, "multi-edit <abs-path1> <abs-path2> ...")
    paths = list(dict.fromkeys(turn.resolve(arg) for arg in turn.args))
    texts = await _read_all(turn, paths)
    if texts is None:
        return "end_turn"
    edits = [FileEdit(p, demo_edit(t, p), t, demo_edit(t, p)) for p, t in texts.items()]
    return await _edit_flow(turn, f"Edit {len(edits)} files", edits, via_client=True)


async def new_file(turn: Turn) -> StopReason:
    """``new-file <path>``: diff with oldText null, permission, write via fs/write_text_file."""
    if not turn.args:
        return await _usage(turn, "new-file <abs-path>")
    path = turn.resolve(turn.args[0])
    edit_ = FileEdit(path, new_file_text(path), None, new_file_text(path))
    return await _edit_flow(turn, f"Create {path}", [edit_], via_client=True)


async def shell(turn: Turn) -> StopReason:
    """``shell <command...>``: ask permission for a command but never run it."""
    command = turn.rest
    if not command:
        return await _usage(turn, "shell <command words...>")
    call_id = turn.session.next_tool_call_id("shell")
    raw_input = {"command": command}
    await turn.send(start_tool_call(call_id, command, kind="execute", status="pending", raw_input=raw_input))
    request = ToolCallUpdate(
        tool_call_id=call_id, title=command, kind="execute", status="pending", raw_input=raw_input
    )
    if await turn.ask_permission(request) == "rejected":
        await turn.send(update_tool_call(call_id, status="failed"))
        await turn.say("Command rejected")
        return "end_turn"
    output = f"(demo) would run: {command}"
    await turn.send(update_tool_call(call_id, status="completed", content=_text_content(output)))
    await turn.say(output)
    return "end_turn"


async def tool_update_only(turn: Turn) -> StopReason:
    """Send a tool_call_update for a tool call id never announced (Gemini does this)."""
    call_id = turn.session.next_tool_call_id("ghost")
    note = "This tool call was never announced with tool_call."
    await turn.send(
        update_tool_call(call_id, title="Ghost tool", status="completed", content=_text_content(note))
    )
    await turn.say(f"Sent a tool_call_update for unannounced tool call {call_id}.\n")
    return "end_turn"


async def pieces(turn: Turn) -> StopReason:
    """A generic tool call whose input, title, content and locations arrive one update at a time."""
    target = turn.resolve(turn.args[0]) if turn.args else turn.session.cwd
    call_id = turn.session.next_tool_call_id("pieces")
    steps = [
        update_tool_call(call_id, raw_input={"pattern": "TODO", "path": target}),
        update_tool_call(call_id, title=f"Search for TODO in {target}", kind="search", status="in_progress"),
        update_tool_call(call_id, content=_text_content("3 matches (pretend)")),
        update_tool_call(call_id, locations=[ToolCallLocation(path=target)]),
        update_tool_call(call_id, status="completed"),
    ]
    await turn.send(start_tool_call(call_id, "tool", status="pending", raw_input={}))
    for step in steps:
        await asyncio.sleep(PIECE_DELAY)
        await turn.send(step)
    await turn.say("The tool call arrived in pieces.\n")
    return "end_turn"
