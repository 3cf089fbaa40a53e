"""Review comments: what the agent is told of them, and how the chat shows them.

ACP's answer to ``session/request_permission`` carries only the chosen option (no content the
agent reads as the tool's result), so the comments reach the agent as context at the head of the
session's next prompt, beside the other notes of the review (``Settlement.start_turn``).
"""

from __future__ import annotations

from ..port import ReviewComment

SIDE_WORDS = {"proposal": "your proposed text", "current": "the file as it was before your edit"}
MAX_QUOTE_LINES = 3


def note_for_agent(title: str, answer: str, comments: list[ReviewComment]) -> str:
    """The note for the agent: which review, what the user answered, then one item per comment."""
    items = [f"The user commented on the review of {title!r} (answered: {answer}):"]
    for comment in comments:
        items.append(f"- {comment.path}, {comment.lines} of {SIDE_WORDS[comment.side]}{_quoted(comment)}: "
                     + comment.text)
    return "\n".join(items)


def _quoted(comment: ReviewComment) -> str:
    lines = comment.quote.split("\n")[:MAX_QUOTE_LINES] if comment.quote else []
    if not lines:
        return ""
    more = " …" if comment.quote.count("\n") >= MAX_QUOTE_LINES else ""
    return " (" + " ⏎ ".join(repr(line) for line in lines) + more + ")"


def chat_line(comment: ReviewComment) -> tuple[str, str]:
    """The comment's line under the tool call in the chat, ``✎ path:3-5 (proposal): text``, as the
    path and what follows it (the chat shortens the path)."""
    span = str(comment.first) if comment.first == comment.last else f"{comment.first}-{comment.last}"
    first_line = comment.text.split("\n", 1)[0]
    return comment.path, f":{span} ({comment.side}): {first_line}"
