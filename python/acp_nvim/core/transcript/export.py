"""A conversation taken out: as Markdown (``:Ai export {file}``): each message under its heading as in the
chat, with the agent's message id in an HTML comment; tool calls fenced as drawn, a compaction's summary
folded in ``<details>`` (the text is the chat's, already redacted as shown; the caller redacts once more);
and as the context an agent that lost it is given (``as_context``)."""

from __future__ import annotations

from collections.abc import Iterator

from .blocks import Block
from .conversation import Conversation
from .tool_calls import FOLDED, UNFOLDED

FENCED = frozenset(("tool",))
"""Kinds drawn as fixed-width lines (icons, indentation): fenced, so Markdown keeps their lines."""
PLAIN_LINES = frozenset(("notice", "info", "error", "agent_notice", "turn_end"))
"""One-line kinds kept apart from the next block."""
CONTEXT_KINDS = frozenset(("user", "heading", "agent", "tool", "plan"))
"""Blocks that make up the conversation itself (``as_context``)."""


def markdown(conversation: Conversation, title: str, about: str) -> str:
    """The whole conversation: ``title`` as the document's heading, ``about`` (agent, session, when) in a
    comment below it, then every block in order."""
    parts = [f"# {title}", comment(about)]
    parts += [text for block in conversation.blocks if (text := block_markdown(conversation, block))]
    return "\n\n".join(parts) + "\n"


def as_context(conversation: Conversation, limit: int) -> str:
    """The conversation as markdown for an agent that lost it (a restart into a new session):
    prompts, answers, tool calls and plans, without notices, thoughts and the turns a rewind
    took back; at most the last ``limit`` characters."""
    parts = [conversation.clean(block) for block in conversation.blocks
             if block.kind in CONTEXT_KINDS and not conversation.is_undone(block.id)]
    text = "\n\n".join(parts)
    if len(text) > limit:
        text = "[… earlier conversation cut …]\n" + text[-limit:]
    return text


def block_markdown(conversation: Conversation, block: Block) -> str:
    """One block: its message id's comment (after a user message's heading), its text."""
    text = conversation.entry_text(block)
    mark = comment(f"message-id: {block.message_id}") if block.message_id is not None else None
    if block.kind == "compaction":
        head, _, summary = text.partition("\n")
        head = head.removeprefix(FOLDED).removeprefix(UNFOLDED).strip()
        return f"<details><summary>{_html(head)}</summary>\n\n{summary}\n\n</details>" if summary else f"*{head}*"
    if block.kind in FENCED:
        return fence(text)
    if block.kind == "user" and mark is not None:
        heading, _, body = text.partition("\n")
        return f"{heading}\n{mark}\n{body}"
    if block.kind in PLAIN_LINES:
        text = "  \n".join(text.split("\n"))  # a Markdown line break keeps the lines apart
    return f"{mark}\n{text}" if mark is not None else text


def comment(text: str) -> str:
    """``<!-- text -->``, never closed early by the text (``--`` is escaped, lines joined)."""
    return f"<!-- {' '.join(text.split()).replace('--', '%2D%2D')} -->"


def fence(text: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in _backtick_runs(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}text\n{text}\n{marks}"


def _backtick_runs(text: str) -> Iterator[str]:
    run = ""
    for char in text:
        if char == "`":
            run += char
        elif run:
            yield run
            run = ""
    if run:
        yield run


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
