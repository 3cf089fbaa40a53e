"""A transcript as Markdown (``:Ai export {file}``): each message under its heading as in the chat, with
the agent's message id in an HTML comment; tool calls fenced as drawn, a compaction's summary folded
in ``<details>``. The text is the chat's (already redacted as shown); the caller redacts once more."""

from __future__ import annotations

from collections.abc import Iterator

from .tool_calls import FOLDED, UNFOLDED
from .transcript import Block, Transcript

FENCED = frozenset(("tool",))
"""Kinds drawn as fixed-width lines (icons, indentation): fenced, so Markdown keeps their lines."""
PLAIN_LINES = frozenset(("notice", "info", "error", "agent_notice", "turn_end"))
"""One-line kinds kept apart from the next block."""


def markdown(transcript: Transcript, title: str, about: str) -> str:
    """The whole transcript: ``title`` as the document's heading, ``about`` (agent, session, when) in a
    comment below it, then every block in order."""
    parts = [f"# {title}", comment(about)]
    parts += [text for block in transcript.blocks if (text := block_markdown(transcript, block))]
    return "\n\n".join(parts) + "\n"


def block_markdown(transcript: Transcript, block: Block) -> str:
    """One block: its message id's comment (after a user message's heading), its text."""
    text = transcript.entry_text(block)
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
