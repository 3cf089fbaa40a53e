"""A plan entry as one line of the chat's plan block: its status box, its priority mark, its text.

``- [ ] ! Fix the parser``: the box is the status (``[ ]`` pending, ``[~]`` in progress, ``[x]``
completed); ``!`` marks a high-priority entry and ``↓`` a low one (a medium one, the usual, has no
mark), so the entries that matter stand out without a column of words.
"""

from __future__ import annotations

from acp.schema import PlanEntry

STATUS_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
PRIORITY_MARKS = {"high": "! ", "low": "↓ "}


def plan_line(entry: PlanEntry) -> str:
    return f"- {STATUS_MARKS.get(entry.status, '[ ]')} {PRIORITY_MARKS.get(entry.priority, '')}{entry.content}"
