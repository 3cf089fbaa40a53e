"""The scenario registry: prompt keyword -> (description, coroutine), defined once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from acp.helpers import ContentBlock, update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    StopReason,
    TextContentBlock,
    UnstructuredCommandInput,
)

from . import (
    asking,
    chat,
    children,
    gate,
    load,
    mcp_client,
    media,
    misbehave,
    protocol,
    quota,
    saved,
    steering,
    terminals,
    tools,
)
from .turn import Turn

Scenario = Callable[[Turn], Awaitable[StopReason]]


async def commands(turn: Turn) -> StopReason:
    """Resend available_commands_update."""
    await turn.send(commands_update())
    await turn.say(f"Sent {len(SCENARIOS)} commands.\n")
    return "end_turn"


DEFAULT_DESCRIPTION = "Think, then stream a markdown reply echoing the prompt"
DEFAULT_SCENARIO: Scenario = chat.default

SCENARIOS: dict[str, tuple[str, Scenario]] = {
    "plan": ("Send a 3-step plan and complete it step by step", chat.plan),
    "plan-priority": ("Send a plan whose entries are of high, medium and low priority", chat.plan_priority),
    "read": ("Read a file through fs/read_text_file and quote it", tools.read),
    "edit": ("Edit a file (2 hunks) after permission, via fs/write_text_file", tools.edit),
    "edit-disk": ("Like edit, but the agent writes the disk itself", tools.edit_disk),
    "edit-snippet": ("Like edit-disk, but the diff only carries line 1", tools.edit_snippet),
    "multi-edit": ("Edit several files in one tool call with one permission", tools.multi_edit),
    "new-file": ("Create a file (diff with oldText null) after permission", tools.new_file),
    "shell": ("Ask permission to run a command (never runs it)", tools.shell),
    "terminal": ("Run a command in a client terminal (terminal/*) and report its output", terminals.terminal),
    "usage": ("Send a usage_update with context size and cost", chat.usage),
    "commands": ("Resend the available commands", commands),
    "mode": ("Switch between the ask and code modes", chat.mode),
    "title": ("Set the session title", chat.title),
    "echo": ("Reply with the JSON of every prompt content block", chat.echo),
    "recall": ("Reply with the session's first prompt (what the agent remembers)", saved.recall),
    "flood": ("Stream N (default 1000) tiny chunks as fast as possible", chat.flood),
    "slow": ("Stream N (default 200) chunks, one every 50 ms", chat.slow),
    "crash": ("Exit the agent process in the middle of the turn", misbehave.crash),
    "garbage": ("Write a non-JSON line to stdout, then reply normally", misbehave.garbage),
    "stderr": ("Write N (default 50) lines to stderr between chunks", misbehave.stderr),
    "tool-update-only": ("Update a tool call that was never announced", tools.tool_update_only),
    "pieces": ("A tool call whose details arrive one update at a time", tools.pieces),
    "load": ("Stream N chunks of B bytes (default 24) and T tool calls, for benchmarks", load.load),
    "turns": ("Stream N exchanges (a question, an answer of L lines) in one turn: a long session", load.turns),
    "pace": ("Stream R chunks a second (default 1000) for S seconds (default 5), then END <time>", load.pace),
    "mcp": ("List the session's MCP servers, or call a tool of one", mcp_client.mcp),
    "ask": ("Ask a form question (elicitation/create) and echo the answer", asking.ask),
    "ask-url": ("Ask the user to open a URL (url-mode elicitation)", asking.ask_url),
    "withdraw": ("Ask permission, then withdraw the request ($/cancel_request)", asking.withdraw),
    "limit": ("Fail the first time with a usage limit (retry after N s, default 1), then succeed", steering.limit),
    "quota": ("Report a spent usage window (reset in N s, default 2), fail on it, then succeed", quota.quota),
    "ids": ("Two messages whose only boundary is a new messageId", protocol.ids),
    "notice": ("Send a notice of each severity (info, warning, error)", protocol.notice),
    "compact": ("Compact the context: a summary streamed, then a failed compaction", protocol.compact),
    "unknown": ("Send an update kind nobody knows (twice) and a malformed notice", protocol.unknown),
    "plan-ops": ("Plans by id: plan_update (items, markdown) and plan_removed", protocol.plan_ops),
    "subagents": ("A Task call whose subagent makes tool calls (hold: it runs until cancelled)",
                  protocol.subagents),
    "children": ("A subagent as a child session (subagent_update; hold: until it alone is cancelled; ask: it asks "
                 "permission)", children.children),
    "late-tool": ("Run until cancelled, then start a tool call before answering cancelled", protocol.late_tool),
    "hold-sessions": ("Hold the later new and forked sessions until a file exists", gate.hold_sessions),
    "media": ("Send a link, an embedded resource, an image, audio and a tool call with an image", media.media),
    "media-bad": ("Send media a client must refuse (bad base64, too large, lying type, paths out)",
                  media.media_bad),
}

ARGUMENT_HINTS: dict[str, str] = {
    "read": "<abs-path>",
    "edit": "<abs-path>",
    "edit-disk": "<abs-path>",
    "edit-snippet": "<abs-path>",
    "multi-edit": "<abs-path1> <abs-path2> ...",
    "new-file": "<abs-path>",
    "shell": "<command words...>",
    "terminal": "[--limit=N] [--cwd=DIR] [--no-ask] [--kill] [--no-wait] <command...>",
    "title": "[--clear | title words...]",
    "flood": "[N]",
    "slow": "[N]",
    "stderr": "[N]",
    "pieces": "[path]",
    "load": "[N] [B] [T] [ids]",
    "turns": "[N] [L]",
    "pace": "[R] [S]",
    "mcp": "[server tool [json-arguments]]",
    "ask": "[tool|async]",
    "ask-url": "[url] [complete]",
    "withdraw": "[seconds]",
    "limit": "[N]",
    "quota": "[seconds]",
    "subagents": "[hold]",
    "hold-sessions": "<abs-path>",
    "children": "[hold] [ask]",
    "media": "[path]",
}


@dataclass(frozen=True)
class ParsedPrompt:
    """A prompt split into scenario keyword, full text, argument words and raw remainder."""

    keyword: str
    text: str
    args: list[str]
    rest: str


def parse_prompt(blocks: list[ContentBlock]) -> ParsedPrompt:
    """Take the first text block: first word (case-insensitive, optional leading '/') picks the scenario."""
    text = next((block.text for block in blocks if isinstance(block, TextContentBlock)), "")
    words = text.split()
    if not words:
        return ParsedPrompt("", text, [], "")
    rest = text.strip()[len(words[0]) :].strip()
    return ParsedPrompt(words[0].lower().removeprefix("/"), text, words[1:], rest)


def pick_scenario(keyword: str) -> Scenario:
    """Return the scenario for ``keyword``, or the default scenario."""
    entry = SCENARIOS.get(keyword)
    return entry[1] if entry else DEFAULT_SCENARIO


def available_commands() -> list[AvailableCommand]:
    """One AvailableCommand per scenario keyword."""
    result = []
    for name, (description, _) in SCENARIOS.items():
        hint = ARGUMENT_HINTS.get(name)
        command_input = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
        result.append(AvailableCommand(name=name, description=description, input=command_input))
    return result


def commands_update() -> AvailableCommandsUpdate:
    """The available_commands_update listing every scenario."""
    return update_available_commands(available_commands())


def help_text() -> str:
    """Human-readable scenario list for ``--help``."""
    lines = []
    for name, (description, _) in SCENARIOS.items():
        syntax = f"{name} {ARGUMENT_HINTS.get(name, '')}".rstrip()
        lines.append(f"  {syntax}\n      {description}")
    lines.append(f"  <anything else>\n      {DEFAULT_DESCRIPTION}")
    return "\n".join(lines)
